package rest

import (
	"net/http"
	"net/url"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/travel"
)

// Shopping carts and related products (/opendata/offers/v1/shopping-carts, related-products): a
// cart is offers, one a bound, and related products, priced; its id reads it back at the same
// price until expiresAt.

type (
	cartBody struct {
		OfferIDs []string          `json:"offerIds"`
		Products []cartProductBody `json:"products"`
	}
	cartProductBody struct {
		ID       string `json:"id"`
		Quantity int    `json:"quantity"`
	}
	addProductsBody struct {
		CartID   string            `json:"cartId"`
		Products []cartProductBody `json:"products"`
	}

	cartDoc struct {
		ID         string        `json:"id"`
		ExpiresAt  string        `json:"expiresAt"`
		Offers     []productDoc  `json:"offers"`
		Products   []cartItemDoc `json:"products"`
		TotalPrice amountDoc     `json:"totalPrice"`
		Links      cartLinks     `json:"_links"`
	}
	cartItemDoc struct {
		Product  relatedDoc `json:"product"`
		Quantity int        `json:"quantity"`
		Total    amountDoc  `json:"total"`
	}
	cartLinks struct {
		Self             link `json:"self"`
		RelatedProducts  link `json:"relatedProducts"`
		TicketConditions link `json:"ticketConditions"`
	}
	relatedDoc struct {
		ID          string    `json:"id"`
		Code        string    `json:"code"`
		Name        string    `json:"name"`
		FlightID    string    `json:"flightId,omitempty"`
		Origin      string    `json:"origin,omitempty"`
		Destination string    `json:"destination,omitempty"`
		UnitPrice   amountDoc `json:"unitPrice"`
		MaxQuantity int       `json:"maxQuantity"`
	}
	relatedListDoc struct {
		Products []relatedDoc `json:"relatedProducts"`
		Links    links        `json:"_links"`
	}
)

const cartsPath = "/opendata/offers/v1/shopping-carts"

// newCart answers POST /opendata/offers/v1/shopping-carts: 201 with the priced cart and its
// Location.
func (a *API) newCart(w http.ResponseWriter, r *http.Request) {
	var b cartBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one object {offerIds, products}"); err != nil {
		a.Error(w, r, err)
		return
	}
	c, err := a.Travel.NewCart(r.Context(), b.OfferIDs, cartProducts(b.Products))
	a.created(w, r, c, err)
}

// addProducts answers POST /opendata/offers/v1/related-products/shopping-carts: the cart with
// the products added, under a new id (201, Location).
func (a *API) addProducts(w http.ResponseWriter, r *http.Request) {
	var b addProductsBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one object {cartId, products}"); err != nil {
		a.Error(w, r, err)
		return
	}
	if b.CartID == "" {
		a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "cartId", "cartId is required: the id of a cart shopping-carts returned"))
		return
	}
	c, err := a.Travel.AddToCart(r.Context(), "cartId", b.CartID, cartProducts(b.Products))
	a.created(w, r, c, err)
}

func (a *API) created(w http.ResponseWriter, r *http.Request, c *flightgraph.ShoppingCart, err error) {
	if err != nil {
		a.Error(w, r, err)
		return
	}
	doc := cartOf(c)
	w.Header().Set("Location", doc.Links.Self.Href)
	renderStatus(w, r, http.StatusCreated, doc)
}

// cart answers GET /opendata/offers/v1/shopping-carts/{cartId}: the cart read back.
func (a *API) cart(w http.ResponseWriter, r *http.Request) {
	c, err := a.Travel.Cart(r.Context(), "cartId", r.PathValue("cartId"))
	if err != nil {
		a.Error(w, r, err)
		return
	}
	render(w, r, cartOf(c))
}

// relatedProducts answers GET /opendata/offers/v1/related-products?offerId=… (or cartId=…): what
// can be added, with the price for one passenger and how many the passengers can use.
func (a *API) relatedProducts(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	var offers []*flightgraph.Offer
	switch {
	case v.Get("cartId") != "":
		c, err := a.Travel.Cart(r.Context(), "cartId", v.Get("cartId"))
		if err != nil {
			a.Error(w, r, err)
			return
		}
		offers = c.Offers
	default:
		o, err := a.offerOf(r)
		if err != nil {
			a.Error(w, r, err)
			return
		}
		offers = []*flightgraph.Offer{o}
	}
	out := relatedListDoc{Products: []relatedDoc{}, Links: self(r)}
	for _, p := range travel.RelatedProducts(offers...) {
		out.Products = append(out.Products, relatedOf(p))
	}
	render(w, r, out)
}

func cartProducts(bs []cartProductBody) []flightgraph.CartProduct {
	out := make([]flightgraph.CartProduct, len(bs))
	for i, b := range bs {
		out[i] = flightgraph.CartProduct{ID: b.ID, Quantity: b.Quantity}
	}
	return out
}

func cartOf(c *flightgraph.ShoppingCart) cartDoc {
	q := "?cartId=" + url.QueryEscape(c.ID)
	d := cartDoc{ID: c.ID, ExpiresAt: c.ExpiresAt.Format(time.RFC3339), Offers: []productDoc{}, Products: []cartItemDoc{},
		TotalPrice: amountDoc{c.Total.Decimal(), c.Total.Currency},
		Links: cartLinks{Self: link{cartsPath + "/" + c.ID}, RelatedProducts: link{"/opendata/offers/v1/related-products" + q},
			TicketConditions: link{"/opendata/offers/v1/ticket-conditions?reservationIdentifier=" + url.QueryEscape(c.ID)}}}
	for _, o := range c.Offers {
		d.Offers = append(d.Offers, productOf(o, ""))
	}
	for _, it := range c.Items {
		d.Products = append(d.Products, cartItemDoc{Product: relatedOf(it.Product), Quantity: it.Quantity, Total: amountDoc{it.Total.Decimal(), it.Total.Currency}})
	}
	return d
}

func relatedOf(p *flightgraph.RelatedProduct) relatedDoc {
	return relatedDoc{ID: p.ID, Code: p.Code, Name: p.Name, FlightID: p.FlightID, Origin: p.Origin, Destination: p.Destination,
		UnitPrice: amountDoc{p.UnitPrice.Decimal(), p.UnitPrice.Currency}, MaxQuantity: p.MaxQuantity}
}

type (
	mailSearchBody struct {
		Email  string     `json:"email"`
		Search searchBody `json:"search"`
	}
	mailedSearchDoc struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		// Cheapest is the cheapest offer the mail names, absent when the search found none.
		Cheapest *productDoc `json:"cheapestOffer,omitempty"`
		Links    links       `json:"_links"`
	}
)

// mailMySearch answers POST /opendata/offers/v1/mail-my-search: the search is run and its summary
// and cheapest offer mailed, through the outbox (202: queued, sent after the answer).
func (a *API) mailMySearch(w http.ResponseWriter, r *http.Request) {
	var b mailSearchBody
	if err := flightgraph.ReadJSON(w, r, maxSearchBytes, &b, "the body must be one object {email, search}"); err != nil {
		a.Error(w, r, err)
		return
	}
	q, err := b.Search.search()
	if err != nil {
		a.Error(w, r, err)
		return
	}
	rec, cheapest, err := a.Travel.MailSearch(r.Context(), b.Email, q)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := mailedSearchDoc{ID: rec.ID, Status: "QUEUED", Links: self(r)}
	if cheapest != nil {
		p := productOf(cheapest, b.Search.DisplayPriceContent)
		out.Cheapest = &p
	}
	renderStatus(w, r, http.StatusAccepted, out)
}
