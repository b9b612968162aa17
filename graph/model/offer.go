package model

import "github.com/flightgraph/flightgraph"

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
