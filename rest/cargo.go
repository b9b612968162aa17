package rest

import (
	"net/http"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// The Cargo API (/opendata/cargo/v1/…), internal: staff and operators only; everyone else is
// answered as for a path that does not exist, by the guard.

type (
	cargoCapacityDoc struct {
		FlightID           string        `json:"flightId"`
		CarrierCode        string        `json:"carrierCode"`
		FlightNumber       int           `json:"flightNumber"`
		FlightScheduleDate string        `json:"flightScheduleDate"`
		Origin             string        `json:"origin"`
		Destination        string        `json:"destination"`
		Haul               string        `json:"haul"`
		VolumeM3           float64       `json:"volumeM3"`
		PayloadKg          int           `json:"payloadKg"`
		Legs               []cargoLegDoc `json:"legs"`
		Links              cargoLinksDoc `json:"_links"`
	}
	cargoLegDoc struct {
		Sequence           int     `json:"sequence"`
		Origin             string  `json:"origin"`
		Destination        string  `json:"destination"`
		Cancelled          bool    `json:"cancelled"`
		Configuration      string  `json:"aircraftConfiguration"`
		AircraftType       string  `json:"aircraftType"`
		AircraftTypeName   string  `json:"aircraftTypeName"`
		HoldVolumeM3       float64 `json:"holdVolumeM3"`
		MaxPayloadKg       int     `json:"maxPayloadKg"`
		Seats              int     `json:"seats"`
		ExpectedPassengers int     `json:"expectedPassengers"`
		ExpectedBags       int     `json:"expectedBags"`
		PassengerKg        int     `json:"passengerKg"`
		BaggageKg          int     `json:"baggageKg"`
		BaggageVolumeM3    float64 `json:"baggageVolumeM3"`
		VolumeM3           float64 `json:"volumeM3"`
		PayloadKg          int     `json:"payloadKg"`
	}
	// cargoLinksDoc links the flight's status (the Flight Status API's), the '+' of its id as %2B.
	cargoLinksDoc struct {
		Self   link `json:"self"`
		Flight link `json:"flight"`
	}
)

// cargoCapacity answers GET /opendata/cargo/v1/flights/{flightId}/capacity.
func (a *API) cargoCapacity(w http.ResponseWriter, r *http.Request) {
	c, err := a.Travel.CargoCapacity(r.Context(), r.PathValue("flightId"))
	if err != nil {
		a.Error(w, r, err)
		return
	}
	render(w, r, cargoCapacityOf(r, c))
}

func cargoCapacityOf(r *http.Request, c *flightgraph.CargoCapacity) *cargoCapacityDoc {
	f := c.Flight
	doc := &cargoCapacityDoc{FlightID: f.ID, CarrierCode: f.CarrierCode, FlightNumber: f.FlightNumber, FlightScheduleDate: f.ScheduleDate,
		Origin: f.OriginCode, Destination: f.DestinationCode, Haul: f.Haul, VolumeM3: c.VolumeM3(), PayloadKg: c.PayloadKg,
		Links: cargoLinksDoc{Self: link{Href: r.URL.RequestURI()}, Flight: link{Href: "/opendata/flightstatus/" + strings.ReplaceAll(f.ID, "+", "%2B")}}}
	for _, l := range c.Legs {
		doc.Legs = append(doc.Legs, cargoLegDoc{Sequence: l.Sequence, Origin: l.OriginCode, Destination: l.DestinationCode, Cancelled: l.Cancelled,
			Configuration: l.ConfigurationCode, AircraftType: l.AircraftTypeCode, AircraftTypeName: l.AircraftTypeName,
			HoldVolumeM3: l.HoldVolumeM3(), MaxPayloadKg: l.MaxPayloadKg, Seats: l.Seats, ExpectedPassengers: l.ExpectedPassengers,
			ExpectedBags: l.ExpectedBags, PassengerKg: l.PassengerKg, BaggageKg: l.BaggageKg, BaggageVolumeM3: l.BaggageVolumeM3(),
			VolumeM3: l.VolumeM3(), PayloadKg: l.PayloadKg})
	}
	return doc
}
