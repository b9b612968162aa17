package model

import (
	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/travel"
)

// Offer is an offer as the flight subgraph serves it: its segments' flights made by
// graph.Loaders.Offers, for all the offers of an answer at once.
type Offer struct {
	*flightgraph.Offer
	Segments []*OfferSegment
}

// IsEntity marks Offer as an Apollo Federation entity; gqlgen's federation plugin requires it.
func (Offer) IsEntity() {}

// OfferSegment is a segment of an offer, with its flight as the subgraph serves flights.
type OfferSegment struct {
	*flightgraph.OfferSegment
	Flight *Flight
}

// LowestFare is a calendar's period with its cheapest offer as the subgraph serves offers.
type LowestFare struct {
	Period string
	Offer  *Offer
}

// TicketConditions are a fare family's conditions, as ticketConditions answers them.
type TicketConditions struct {
	FareFamily *flightgraph.FareFamily
	Conditions []flightgraph.TicketCondition
}

// IncludedBaggage is each passenger type's baggage included in the offer's fare.
func (o *Offer) IncludedBaggage() []*flightgraph.PassengerBaggage {
	return travel.IncludedBaggage(o.Offer)
}

// ShoppingCart is a cart as the flight subgraph serves it: its offers made by
// graph.Loaders.Offers.
type ShoppingCart struct {
	*flightgraph.ShoppingCart
	Offers []*Offer
}

// IsEntity marks ShoppingCart as an Apollo Federation entity.
func (ShoppingCart) IsEntity() {}

// MailedSearch is mail-my-search's answer: the record's id and the cheapest offer the mail names.
type MailedSearch struct {
	ID            string
	CheapestOffer *Offer
}

// Deal is a deal with its offer served by the loaders.
type Deal struct {
	*flightgraph.Deal
	Offer *Offer
}

// DestinationCode is the code of the deal's destination.
func (d *Deal) DestinationCode() string { return d.Destination.Code }

// DestinationType is CITY or AIRPORT.
func (d *Deal) DestinationType() string { return d.Destination.PlaceType() }

// City is the city of the deal's destination.
func (d *Deal) City() *flightgraph.City { return d.Destination.City }

// FlightAvailability is an itinerary's availability with its flights served by the loaders.
type FlightAvailability struct {
	*flightgraph.FlightAvailability
	Segments []*SegmentAvailability
}

// SegmentAvailability is one flight of an itinerary's availability, served by the loaders.
type SegmentAvailability struct {
	*flightgraph.SegmentAvailability
	Flight *Flight
}
