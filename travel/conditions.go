package travel

import (
	"context"

	"github.com/flightgraph/flightgraph"
)

// ConditionsQuery asks for ticket conditions: of an offer (OfferID), or of a fare family on a
// trip (Origin, Destination, DepartureDate, Family).
type ConditionsQuery struct {
	OfferID string
	// ReservationIdentifier is a shopping cart's id: flightgraph takes no bookings, so a cart
	// stands for one; its outbound offer's conditions answer.
	ReservationIdentifier              string
	Origin, Destination, DepartureDate string
	Family                             string
	Currency                           string
}

// TicketConditions returns a fare family's conditions with their fees in the offer's currency, or
// the query's, else the point of sale's, else euros. An offer id is read back as Offer does; a
// trip's places and date are checked as a search's.
func (s *Service) TicketConditions(ctx context.Context, q ConditionsQuery) (*flightgraph.FareFamily, []flightgraph.TicketCondition, error) {
	if q.OfferID != "" || q.ReservationIdentifier != "" {
		var o *flightgraph.Offer
		if q.ReservationIdentifier != "" {
			c, err := s.Cart(ctx, "reservationIdentifier", q.ReservationIdentifier)
			if err != nil {
				return nil, nil, err
			}
			o = c.Offers[0]
		} else {
			var err error
			if o, err = s.Offer(ctx, "offerId", q.OfferID); err != nil {
				return nil, nil, err
			}
		}
		cur, err := flightgraph.CurrencyOf("currency", o.Price.Total.Currency)
		if err != nil {
			return nil, nil, err
		}
		return o.Family, o.Family.Conditions(cur), nil
	}
	if q.Family == "" {
		return nil, nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "fareFamily", "give an offerId, a reservationIdentifier, or a trip (origin, destination, departureDate) and its fareFamily")
	}
	fam, err := flightgraph.FareFamilyOf("fareFamily", q.Family)
	if err != nil {
		return nil, nil, err
	}
	search := &flightgraph.OfferSearch{Passengers: []flightgraph.Passenger{{ID: 1, Type: "ADT"}}, Currency: q.Currency,
		Connections: []flightgraph.RequestedConnection{{Origin: q.Origin, Destination: q.Destination, DepartureDate: q.DepartureDate}}}
	if err := s.resolve(ctx, search); err != nil {
		return nil, nil, err
	}
	cur, err := s.currency(search, flightgraph.PointOfSaleFromContext(ctx))
	if err != nil {
		return nil, nil, err
	}
	return fam, fam.Conditions(cur), nil
}
