package flightgraph

import "time"

// Related products are sold with an offer: a seat, extra legroom, an extra bag or lounge access
// on one of its flights, or insurance for the whole trip. A product's id is its code and, for a
// flight's product, the flight's id: "SEAT_XL:20261123+XX+1001", "INSURANCE".
const (
	ProductSeat      = "SEAT"      // a seat chosen in advance, where the fare family does not include it
	ProductLegroom   = "SEAT_XL"   // a seat with extra legroom, in Economy
	ProductExtraBag  = "EXTRA_BAG" // one more checked bag, priced as the baggage API's extra-baggage online
	ProductLounge    = "LOUNGE"    // the departure airport's lounge, where the family does not include it
	ProductInsurance = "INSURANCE" // cancellation and medical cover for the trip, per passenger
)

// MaxCartItems bounds the products of one shopping cart, and MaxCartOffers its offers: one a
// bound.
const (
	MaxCartItems  = 20
	MaxCartOffers = 2
)

// RelatedProduct is one product an offer or a cart can add, with its price for one passenger.
type RelatedProduct struct {
	ID   string
	Code string
	Name string
	// FlightID is the flight a flight's product is for, "" for the trip's.
	FlightID            string
	Origin, Destination string
	UnitPrice           Money
	// MaxQuantity is how many the passengers can use: one per passenger with a seat, or per
	// passenger for insurance.
	MaxQuantity int
}

// CartItem is a related product in a cart, with its quantity and their price.
type CartItem struct {
	Product  *RelatedProduct
	Quantity int
	Total    Money
}

// CartProduct asks for quantity of the related product id.
type CartProduct struct {
	ID       string
	Quantity int
}

// ShoppingCart is a priced selection: offers, one a bound, and related products. Total is the
// offers' totals plus the items'. Like an offer, it is read back by its id at the same price until
// ExpiresAt, its first offer's expiry.
type ShoppingCart struct {
	ID        string
	Offers    []*Offer
	Items     []*CartItem
	Total     Money
	ExpiresAt time.Time
}
