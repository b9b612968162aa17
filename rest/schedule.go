package rest

import (
	"net/http"
	"time"

	"github.com/flightgraph/flightgraph"
)

type (
	routeList struct {
		Routes []routeDoc `json:"routes"`
		Page   page       `json:"page"`
		Links  links      `json:"_links"`
	}
	routeDoc struct {
		Origin          placeRef `json:"origin"`
		Destination     placeRef `json:"destination"`
		Airline         airline  `json:"airline"`
		Distance        distance `json:"distance"`
		BlockTime       string   `json:"blockTime"`
		Haul            string   `json:"haul"`
		WeeklyFrequency int      `json:"weeklyFrequency"`
	}
	placeRef struct {
		Code string `json:"code"`
	}
	distance struct {
		Value int    `json:"value"`
		Unit  string `json:"unit"`
	}
	scheduleList struct {
		Flights []scheduleDoc `json:"flights"`
		Page    page          `json:"page"`
		Links   links         `json:"_links"`
	}
	scheduleDoc struct {
		Airline               airline  `json:"airline"`
		FlightNumber          int      `json:"flightNumber"`
		LegSequence           int      `json:"legSequence"`
		Origin                placeRef `json:"origin"`
		Destination           placeRef `json:"destination"`
		DepartureTime         string   `json:"departureTime"`
		ArrivalTime           string   `json:"arrivalTime"`
		DepartureDayOffset    int      `json:"departureDayOffset"`
		ArrivalDayOffset      int      `json:"arrivalDayOffset"`
		DaysOfOperation       string   `json:"daysOfOperation"`
		PeriodOfOperation     period   `json:"periodOfOperation"`
		AircraftConfiguration string   `json:"aircraftConfiguration"`
		ServiceType           string   `json:"serviceType"`
		Distance              distance `json:"distance"`
		BlockTime             string   `json:"blockTime"`
	}
	period struct {
		From string `json:"from"`
		To   string `json:"to"`
	}
)

// routes answers GET /opendata/schedule/v1/routes.
func (a *API) routes(w http.ResponseWriter, r *http.Request) {
	s, names, err := a.scheduleArgs(r)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	list, total, err := a.Travel.FindRoutes(r.Context(), flightgraph.RouteFilter{Origin: s.Origin, Destination: s.Destination, Carrier: s.Carrier, Page: s.Page})
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := routeList{Routes: make([]routeDoc, len(list))}
	for i, rt := range list {
		out.Routes[i] = routeDoc{Origin: placeRef{rt.OriginCode}, Destination: placeRef{rt.DestinationCode}, Airline: airline{rt.CarrierCode, names[rt.CarrierCode]},
			Distance: distance{rt.DistanceKm, "KM"}, BlockTime: flightgraph.ISODuration(time.Duration(rt.BlockMinutes) * time.Minute), Haul: rt.Haul, WeeklyFrequency: rt.WeeklyFlights}
	}
	out.Page, out.Links = pageOf(r, s.Page, len(list), total)
	render(w, r, out)
}

// scheduleArgs reads what the network's lists take (paging, origin and destination airport or
// city codes, carrier, flight number, date) and the carrier names they show.
func (a *API) scheduleArgs(r *http.Request) (f flightgraph.ScheduleFilter, names map[string]string, err error) {
	q := r.URL.Query()
	if f.Page, err = paging(q); err != nil {
		return f, nil, err
	}
	f.Carrier, f.Date = q.Get("carrier"), q.Get("date")
	ctx := r.Context()
	if f.Origin, f.Destination, err = a.Travel.Ends(ctx, q.Get("origin"), q.Get("destination")); err != nil {
		return f, nil, err
	}
	if f.FlightNumber, _, err = number(q, "flightNumber"); err != nil {
		return f, nil, err
	}
	names, err = a.Travel.CarrierNames(ctx)
	return f, names, err
}

// schedule answers GET /opendata/schedule/v1/flights: the SSIM-like schedule records.
func (a *API) schedule(w http.ResponseWriter, r *http.Request) {
	f, names, err := a.scheduleArgs(r)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	list, total, err := a.Travel.FindSchedule(r.Context(), f)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := scheduleList{Flights: make([]scheduleDoc, len(list))}
	for i, l := range list {
		out.Flights[i] = scheduleDoc{Airline: airline{l.CarrierCode, names[l.CarrierCode]}, FlightNumber: l.FlightNumber, LegSequence: l.Sequence,
			Origin: placeRef{l.OriginCode}, Destination: placeRef{l.DestinationCode}, DepartureTime: l.DepartureLocal, ArrivalTime: l.ArrivalLocal,
			DepartureDayOffset: l.DepartureDayShift, ArrivalDayOffset: l.ArrivalDayOffset, DaysOfOperation: l.Days,
			PeriodOfOperation: period{l.PeriodFrom, l.PeriodTo}, AircraftConfiguration: l.Configuration, ServiceType: l.ServiceType,
			Distance: distance{l.DistanceKm, "KM"}, BlockTime: flightgraph.ISODuration(time.Duration(l.BlockMinutes) * time.Minute)}
	}
	out.Page, out.Links = pageOf(r, f.Page, len(list), total)
	render(w, r, out)
}
