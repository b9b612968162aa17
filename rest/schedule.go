package rest

import (
	"net/http"
	"strconv"
	"strings"
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

// carrierNames maps carrier codes to names for the lists.
func (a *API) carrierNames(r *http.Request) (map[string]string, error) {
	cs, err := a.Travel.Carriers(r.Context())
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(cs))
	for _, c := range cs {
		out[c.Code] = c.Name
	}
	return out, nil
}

// routes answers GET /opendata/schedule/v1/routes.
func (a *API) routes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := paging(q)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	f := flightgraph.RouteFilter{Carrier: strings.ToUpper(q.Get("carrier")), Page: p}
	if f.Origin, f.Destination, err = a.ends(r); err != nil {
		a.Error(w, r, err)
		return
	}
	list, total, err := a.Travel.FindRoutes(r.Context(), f)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	names, err := a.carrierNames(r)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	out := routeList{Routes: make([]routeDoc, len(list))}
	for i, rt := range list {
		out.Routes[i] = routeDoc{Origin: placeRef{rt.OriginCode}, Destination: placeRef{rt.DestinationCode}, Airline: airline{rt.CarrierCode, names[rt.CarrierCode]},
			Distance: distance{rt.DistanceKm, "KM"}, BlockTime: flightgraph.ISODuration(time.Duration(rt.BlockMinutes) * time.Minute), Haul: rt.Haul, WeeklyFrequency: rt.WeeklyFlights}
	}
	out.Page, out.Links = pageOf(r, p, len(list), total)
	render(w, r, out)
}

// ends reads and checks the optional origin and destination airport or city codes.
func (a *API) ends(r *http.Request) (origin, destination string, err error) {
	q := r.URL.Query()
	if v := q.Get("origin"); v != "" {
		if origin, err = a.Travel.PlaceExists(r.Context(), "origin", v); err != nil {
			return "", "", err
		}
	}
	if v := q.Get("destination"); v != "" {
		if destination, err = a.Travel.PlaceExists(r.Context(), "destination", v); err != nil {
			return "", "", err
		}
	}
	return origin, destination, nil
}

// schedule answers GET /opendata/schedule/v1/flights: the SSIM-like schedule records.
func (a *API) schedule(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p, err := paging(q)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	f := flightgraph.ScheduleFilter{Carrier: strings.ToUpper(q.Get("carrier")), Date: q.Get("date"), Page: p}
	if f.Origin, f.Destination, err = a.ends(r); err != nil {
		a.Error(w, r, err)
		return
	}
	if v := q.Get("flightNumber"); v != "" {
		if f.FlightNumber, err = strconv.Atoi(v); err != nil {
			a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, "flightNumber", "flightNumber must be a number, got %q", v))
			return
		}
	}
	list, total, err := a.Travel.FindSchedule(r.Context(), f)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	names, err := a.carrierNames(r)
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
	out.Page, out.Links = pageOf(r, p, len(list), total)
	render(w, r, out)
}
