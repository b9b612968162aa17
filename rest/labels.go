package rest

import (
	"context"

	"github.com/flightgraph/flightgraph"
)

// Labels of the REST documents in the service's languages.
var (
	statusLabels = map[flightgraph.FlightStatus][3]string{ // en, fr, nl
		flightgraph.StatusScheduled: {"Scheduled", "Programmé", "Gepland"},
		flightgraph.StatusOnTime:    {"On time", "À l'heure", "Op tijd"},
		flightgraph.StatusDelayed:   {"Delayed", "Retardé", "Vertraagd"},
		flightgraph.StatusBoarding:  {"Boarding", "Embarquement", "Instappen"},
		flightgraph.StatusDeparted:  {"Departed", "Parti", "Vertrokken"},
		flightgraph.StatusArrived:   {"Arrived", "Arrivé", "Aangekomen"},
		flightgraph.StatusCancelled: {"Cancelled", "Annulé", "Geannuleerd"},
	}
	cabinLabels = map[flightgraph.CabinClass][3]string{
		flightgraph.CabinFirst:    {"First", "Première", "First"},
		flightgraph.CabinBusiness: {"Business", "Affaires", "Business"},
		flightgraph.CabinPremium:  {"Premium Economy", "Premium Economy", "Premium Economy"},
		flightgraph.CabinEconomy:  {"Economy", "Économique", "Economy"},
	}
)

func pick(l [3]string, lang string) string {
	switch lang {
	case "fr":
		return l[1]
	case "nl":
		return l[2]
	}
	return l[0]
}

// language is the language of the request's point of sale, as the label tables name it.
func language(ctx context.Context) string {
	return string(flightgraph.PointOfSaleFromContext(ctx).Language)
}
