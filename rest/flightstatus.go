package rest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/travel"
)

// The Flight Status documents, field for field as the original API's (original-api-shapes.md);
// fields are added, never renamed or dropped.
type (
	flightList struct {
		OperationalFlights []*operationalFlight `json:"operationalFlights"`
		Page               page                 `json:"page"`
		Links              links                `json:"_links"`
	}
	operationalFlight struct {
		FlightNumber                 int             `json:"flightNumber"`
		OperationalSuffix            string          `json:"operationalSuffix"`
		FlightScheduleDate           string          `json:"flightScheduleDate"`
		ID                           string          `json:"id"`
		Haul                         string          `json:"haul"`
		Route                        []string        `json:"route"`
		Airline                      airline         `json:"airline"`
		CodeShareRelations           []codeShare     `json:"codeShareRelations"`
		FlightRelations              flightRelations `json:"flightRelations"`
		FlightStatusPublic           string          `json:"flightStatusPublic"`
		FlightStatusPublicLangTransl string          `json:"flightStatusPublicLangTransl"`
		FlightLegs                   []*flightLeg    `json:"flightLegs"`
		Links                        *links          `json:"_links,omitempty"`
	}
	airline struct {
		Code string `json:"code"`
		Name string `json:"name"`
	}
	// codeShare is another carrier's designator of the flight; code F is a free-sale codeshare,
	// the only kind the service has, and type PASSENGER likewise.
	codeShare struct {
		MarketingFlightNumber int     `json:"marketingFlightNumber"`
		Code                  string  `json:"code"`
		Type                  string  `json:"type"`
		Airline               airline `json:"airline"`
	}
	flightRelations struct {
		OnwardFlightData   *relatedFlight `json:"onwardFlightData,omitempty"`
		PreviousFlightData *relatedFlight `json:"previousFlightData,omitempty"`
	}
	relatedFlight struct {
		ID                 string `json:"id"`
		FlightScheduleDate string `json:"flightScheduleDate,omitempty"`
		AirlineCode        string `json:"airlineCode,omitempty"`
		FlightNumber       string `json:"flightNumber,omitempty"`
	}
	flightLeg struct {
		Status                    string        `json:"status"`
		StatusName                string        `json:"statusName"`
		PublishedStatus           string        `json:"publishedStatus"`
		DepartureInformation      movementInfo  `json:"departureInformation"`
		ArrivalInformation        movementInfo  `json:"arrivalInformation"`
		LegStatusPublic           string        `json:"legStatusPublic"`
		LegStatusPublicLangTransl string        `json:"legStatusPublicLangTransl"`
		PassengerCustomsStatus    string        `json:"passengerCustomsStatus"`
		ServiceType               string        `json:"serviceType"`
		ServiceTypeName           string        `json:"serviceTypeName"`
		Restricted                bool          `json:"restricted"`
		ScheduledFlightDuration   string        `json:"scheduledFlightDuration"`
		CompletionPercentage      string        `json:"completionPercentage"`
		TimeZoneDifference        string        `json:"timeZoneDifference"`
		Aircraft                  *aircraftInfo `json:"aircraft,omitempty"`
		Irregularity              *irregularity `json:"irregularity,omitempty"`
	}
	movementInfo struct {
		Airport airportInfo `json:"airport"`
		Times   times       `json:"times"`
	}
	airportInfo struct {
		Code          string   `json:"code"`
		Name          string   `json:"name"`
		NameLangTranl string   `json:"nameLangTranl"`
		City          cityInfo `json:"city"`
		Location      location `json:"location"`
		Places        places   `json:"places"`
	}
	cityInfo struct {
		Code          string      `json:"code"`
		Name          string      `json:"name"`
		NameLangTranl string      `json:"nameLangTranl"`
		Country       countryInfo `json:"country"`
	}
	countryInfo struct {
		AreaCode      string `json:"areaCode"`
		Code          string `json:"code"`
		Name          string `json:"name"`
		NameLangTranl string `json:"nameLangTranl"`
		EuroCountry   string `json:"euroCountry"`
		EUCountry     string `json:"euCountry"`
	}
	location struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	}
	places struct {
		GateNumber      []string `json:"gateNumber"`
		ParkingPosition string   `json:"parkingPosition"`
		PierCode        string   `json:"pierCode"`
		TerminalCode    string   `json:"terminalCode"`
		BoardingPier    string   `json:"boardingPier"`
		CheckInZone     []string `json:"checkInZone"`
	}
	times struct {
		Scheduled       string     `json:"scheduled"`
		LatestPublished string     `json:"latestPublished"`
		Estimated       *timeValue `json:"estimated,omitempty"`
		Actual          *timeValue `json:"actual,omitempty"`
	}
	timeValue struct {
		Value string `json:"value"`
	}
	aircraftInfo struct {
		Registration                 string `json:"registration"`
		TypeCode                     string `json:"typeCode"`
		TypeName                     string `json:"typeName"`
		SubFleetCodeID               string `json:"subFleetCodeId"`
		OwnerAirlineCode             string `json:"ownerAirlineCode"`
		OwnerAirlineName             string `json:"ownerAirlineName"`
		PhysicalPaxConfiguration     string `json:"physicalPaxConfiguration"`
		OperationalConfiguration     string `json:"operationalConfiguration"`
		WifiEnabled                  string `json:"wifiEnabled"`
		SatelliteConnectivityOnBoard string `json:"satelliteConnectivityOnBoard"`
	}
	irregularity struct {
		Cancelled string `json:"cancelled"`
	}
)

// timeLayout is the documented time format: milliseconds and the local offset.
const timeLayout = "2006-01-02T15:04:05.000-07:00"

// formatTime is t.Format(timeLayout) in 55 ns rather than 142: a flight's document shows six
// times, and Format's reading of its layout was a quarter of the document's making (issue 22).
// TestFormatTime holds it to Format.
func formatTime(t time.Time) string {
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.Format(timeLayout)
	}
	hour, min, sec := t.Clock()
	_, offset := t.Zone()
	b := make([]byte, 0, len(timeLayout))
	b = append4(b, year)
	b = append(b, '-')
	b = append2(b, int(month))
	b = append(b, '-')
	b = append2(b, day)
	b = append(b, 'T')
	b = append2(b, hour)
	b = append(b, ':')
	b = append2(b, min)
	b = append(b, ':')
	b = append2(b, sec)
	ms := t.Nanosecond() / 1e6
	b = append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return string(appendOffset(b, offset/60, ':'))
}

// appendOffset appends an offset in minutes as ±hh, sep and mm.
func appendOffset(b []byte, minutes int, sep ...byte) []byte {
	sign := byte('+')
	if minutes < 0 {
		sign, minutes = '-', -minutes
	}
	b = append(b, sign)
	b = append2(b, minutes/60)
	b = append(b, sep...)
	return append2(b, minutes%60)
}

func append2(b []byte, n int) []byte { return append(b, byte('0'+n/10%10), byte('0'+n%10)) }

func append4(b []byte, n int) []byte { return append2(append2(b, n/100), n%100) }

// publicStatus is a status as the documents name it: the domain's own name, the one GraphQL
// gives, so that a flight has one status at an instant on both edges.
func publicStatus(s flightgraph.FlightStatus) string { return string(s) }

// legStatus is the one-letter operational status.
var legStatus = map[flightgraph.FlightStatus]string{
	flightgraph.StatusScheduled: "S", flightgraph.StatusOnTime: "O", flightgraph.StatusDelayed: "D", flightgraph.StatusBoarding: "B",
	flightgraph.StatusDeparted: "A", flightgraph.StatusArrived: "L", flightgraph.StatusCancelled: "C",
}

func yn(b bool) string {
	if b {
		return "Y"
	}
	return "N"
}

// flightDoc renders one flight of a bundle at now in the language.
func flightDoc(b *travel.FlightBundle, f *flightgraph.Flight, now time.Time, lang string) *operationalFlight {
	legs := b.Legs[f.ID]
	status := flightgraph.FlightStatusAt(legs, now)
	doc := &operationalFlight{FlightNumber: f.FlightNumber, OperationalSuffix: f.Suffix, FlightScheduleDate: f.ScheduleDate, ID: f.ID,
		Haul: f.Haul, Airline: airline{Code: f.CarrierCode}, CodeShareRelations: []codeShare{},
		FlightStatusPublic: publicStatus(status), FlightStatusPublicLangTransl: pick(statusLabels[status], lang), FlightLegs: []*flightLeg{}}
	if c := b.Carriers[f.CarrierCode]; c != nil {
		doc.Airline.Name = c.Name
	}
	for _, cs := range f.MarketedAs() {
		a := airline{Code: cs.Carrier}
		if c := b.Carriers[cs.Carrier]; c != nil {
			a.Name = c.Name
		}
		doc.CodeShareRelations = append(doc.CodeShareRelations, codeShare{MarketingFlightNumber: cs.Number, Code: "F", Type: "PASSENGER", Airline: a})
	}
	// The onward flight as the original shows it; the previous one by its id only.
	if f.OnwardFlightID != "" {
		if id, err := flightgraph.ParseFlightID("id", f.OnwardFlightID); err == nil {
			doc.FlightRelations.OnwardFlightData = &relatedFlight{ID: f.OnwardFlightID, FlightScheduleDate: id.Date, AirlineCode: id.Carrier,
				FlightNumber: fmt.Sprintf("%04d", id.Number)}
		}
	}
	if f.PreviousFlightID != "" {
		doc.FlightRelations.PreviousFlightData = &relatedFlight{ID: f.PreviousFlightID}
	}
	for i, l := range legs {
		if i == 0 {
			doc.Route = append(doc.Route, l.OriginCode)
		}
		doc.Route = append(doc.Route, l.DestinationCode)
		doc.FlightLegs = append(doc.FlightLegs, legDoc(b, f, l, now, lang))
	}
	return doc
}

func legDoc(b *travel.FlightBundle, f *flightgraph.Flight, l *flightgraph.FlightLeg, now time.Time, lang string) *flightLeg {
	st := l.StatusAt(now)
	dep, arr := l.DepartureMovement(), l.ArrivalMovement()
	leg := &flightLeg{Status: legStatus[st], StatusName: pick(statusLabels[st], "en"), PublishedStatus: publicStatus(st),
		DepartureInformation: movementDoc(b, l.OriginCode, dep, now, lang), ArrivalInformation: movementDoc(b, l.DestinationCode, arr, now, lang),
		LegStatusPublic: publicStatus(st), LegStatusPublicLangTransl: pick(statusLabels[st], lang),
		PassengerCustomsStatus: customs(b, l), ServiceType: l.ServiceType, ServiceTypeName: "Normal Service",
		ScheduledFlightDuration: l.Duration(), CompletionPercentage: completion(l, now),
		TimeZoneDifference: offsetString(l.ArrivalOffset - l.DepartureOffset)}
	if a := b.Aircraft[l.ConfigurationCode]; a != nil {
		owner := b.Carriers[a.CarrierCode]
		leg.Aircraft = &aircraftInfo{Registration: strings.ReplaceAll(l.Registration, "-", ""), TypeCode: a.TypeCode, TypeName: a.TypeName,
			SubFleetCodeID: a.Configuration, OwnerAirlineCode: a.CarrierCode, PhysicalPaxConfiguration: a.Layout,
			OperationalConfiguration: a.Layout, WifiEnabled: yn(a.Wifi), SatelliteConnectivityOnBoard: yn(a.Wifi)}
		if owner != nil {
			leg.Aircraft.OwnerAirlineName = owner.Name
		}
	}
	if l.Cancelled {
		leg.Irregularity = &irregularity{Cancelled: "Y"}
	}
	return leg
}

// customs is SCHENGEN when both ends are in the Schengen area.
func customs(b *travel.FlightBundle, l *flightgraph.FlightLeg) string {
	o, d := b.Airports[l.OriginCode], b.Airports[l.DestinationCode]
	if o != nil && d != nil {
		co, cd := b.Countries[o.CountryCode], b.Countries[d.CountryCode]
		if co != nil && cd != nil && co.Schengen && cd.Schengen {
			return "SCHENGEN"
		}
	}
	return "NON_SCHENGEN"
}

func movementDoc(b *travel.FlightBundle, code string, m *flightgraph.Movement, now time.Time, lang string) movementInfo {
	estimated := formatTime(m.Estimated)
	info := movementInfo{Times: times{Scheduled: formatTime(m.Scheduled), LatestPublished: estimated, Estimated: &timeValue{Value: estimated}}}
	if a := m.ActualAt(now); a != nil {
		info.Times.Actual = &timeValue{Value: formatTime(*a)}
	}
	ap := airportInfo{Code: code, Places: places{GateNumber: []string{}, CheckInZone: []string{}}}
	if a := b.Airports[code]; a != nil {
		ap.Name, ap.NameLangTranl = strings.ToUpper(a.Name), a.Name
		ap.Location = location{Latitude: a.Latitude, Longitude: a.Longitude}
		if c := b.Cities[a.CityCode]; c != nil {
			ap.City = cityInfo{Code: c.Code, Name: c.Name, NameLangTranl: c.Label(lang)}
		}
		if n := b.Countries[a.CountryCode]; n != nil {
			ap.City.Country = countryInfo{AreaCode: n.AreaCode, Code: n.Code, Name: n.Name, NameLangTranl: n.Label(lang), EuroCountry: yn(n.Euro), EUCountry: yn(n.EU)}
		}
	}
	if m.Gate != "" {
		ap.Places.GateNumber = []string{m.Gate}
		ap.Places.ParkingPosition = m.Gate
		ap.Places.PierCode = m.Gate[:1]
		ap.Places.BoardingPier = m.Gate[:1]
	}
	ap.Places.TerminalCode = m.Terminal
	info.Airport = ap
	return info
}

func completion(l *flightgraph.FlightLeg, now time.Time) string {
	dep, arr := l.EstimatedDeparture(), l.EstimatedArrival()
	switch {
	case l.Cancelled || now.Before(dep):
		return "0"
	case !now.Before(arr):
		return "100"
	}
	return strconv.Itoa(int(100 * now.Sub(dep) / arr.Sub(dep)))
}

func offsetString(minutes int) string {
	return string(appendOffset(make([]byte, 0, 5), minutes))
}

// flight answers GET /opendata/flightstatus/{id}.
func (a *API) flight(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, b, err := a.Travel.FlightBundle(ctx, r.PathValue("id"))
	if err != nil {
		a.Error(w, r, err)
		return
	}
	doc := flightDoc(b, f, a.Now(), language(ctx))
	l := self(r)
	doc.Links = &l
	render(w, r, doc)
}

// flights answers GET /opendata/flightstatus: flights leaving (movementType D, the default) or
// arriving (A) between startRange and endRange, with the original's filters.
func (a *API) flights(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, err := a.flightFilter(r)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	list, total, err := a.Travel.FindFlights(ctx, f)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	b, err := a.Travel.Bundle(ctx, list)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	now, lang := a.Now(), language(ctx)
	out := flightList{OperationalFlights: make([]*operationalFlight, len(list))}
	for i, fl := range list {
		out.OperationalFlights[i] = flightDoc(b, fl, now, lang)
	}
	out.Page, out.Links = pageOf(r, f.Page, len(list), total)
	render(w, r, out)
}

// MaxRange bounds the time range of one flight status search.
const MaxRange = 7 * 24 * time.Hour

func (a *API) flightFilter(r *http.Request) (flightgraph.FlightFilter, error) {
	q := r.URL.Query()
	var f flightgraph.FlightFilter
	p, err := paging(q)
	if err != nil {
		return f, err
	}
	f.Page = p
	for _, name := range []string{"startRange", "endRange"} {
		if q.Get(name) == "" {
			return f, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, name, "%s is required: a date-time such as 2026-11-22T00:00:00Z", name)
		}
	}
	ctx := r.Context()
	if f.Origin, f.Destination, err = a.Travel.Ends(ctx, q.Get("origin"), q.Get("destination")); err != nil {
		return f, err
	}
	movement := strings.ToUpper(q.Get("movementType"))
	if movement == "" {
		movement = "D"
	}
	if movement != "D" && movement != "A" {
		return f, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "movementType", "movementType is A (arrivals) or D (departures), got %q", movement)
	}
	// timeOriginType says which times the range bounds: S the scheduled (the default); M (modified),
	// I (internal) and P (public) the latest estimate, which is all the service keeps beyond the
	// schedule.
	switch v := strings.ToUpper(q.Get("timeOriginType")); v {
	case "", "S":
	case "M", "I", "P":
		f.Estimated = true
	default:
		return f, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "timeOriginType", "timeOriginType is S, M, I or P, got %q", q.Get("timeOriginType"))
	}
	timeType := strings.ToUpper(q.Get("timeType"))
	if timeType != "" && timeType != "U" && timeType != "L" {
		return f, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "timeType", "timeType is U (UTC) or L (local), got %q", q.Get("timeType"))
	}
	// Times without an offset are UTC, or with timeType L local at the airport the movement is
	// at (the origin for departures, the destination for arrivals).
	loc := time.UTC
	if timeType == "L" {
		at := f.Origin
		if movement == "A" {
			at = f.Destination
		}
		if at == nil {
			return f, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, map[string]string{"D": "origin", "A": "destination"}[movement],
				"local times (timeType L) need the airport they are local to")
		}
		if loc, err = time.LoadLocation(at.TimeZone()); err != nil {
			return f, fmt.Errorf("rest: time zone of %s: %w", at.Code, err)
		}
	}
	start, err := parseRange("startRange", q.Get("startRange"), loc)
	if err != nil {
		return f, err
	}
	end, err := parseRange("endRange", q.Get("endRange"), loc)
	if err != nil {
		return f, err
	}
	if !end.After(start) || end.Sub(start) > MaxRange {
		return f, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "endRange", "endRange must be after startRange and at most %d days later", int(MaxRange.Hours()/24))
	}
	if movement == "D" {
		f.DepartureFrom, f.DepartureTo = start, end
	} else {
		f.ArrivalFrom, f.ArrivalTo = start, end
	}
	if f.Carrier = q.Get("carrierCode"); f.Carrier == "" {
		f.Carrier = q.Get("carrier")
	}
	if f.FlightNumber, _, err = number(q, "flightNumber"); err != nil {
		return f, err
	}
	return f, nil
}

// rangeLayouts are the forms without an offset that parseRange reads in a location.
var rangeLayouts = []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"}

// parseRange reads a date-time; one without an offset is in loc.
func parseRange(param, v string, loc *time.Location) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	for _, layout := range rangeLayouts {
		if t, err := time.ParseInLocation(layout, v, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, flightgraph.ParamErrorf(flightgraph.ECodeBadFormat, param, "%s must be a date-time such as 2026-11-22T06:00:00Z, got %q", param, v)
}
