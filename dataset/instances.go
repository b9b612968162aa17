package dataset

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// Materialiser turns the schedule into flight instances for given schedule dates. The operation
// of each instance (delay, cancellation, gate, airframe) is derived from the seed and the flight
// id, so materialising a date twice gives the same rows.
type Materialiser struct {
	seed     int64
	flights  [][]*flightgraph.ScheduledLeg // legs of one flight number and period, by sequence
	zones    map[string]*time.Location
	carriers []string // of the schedule, sorted: who may sell another's flight
}

// NewMaterialiser prepares the schedule; zones maps each airport code to its IANA time zone.
func NewMaterialiser(seed int64, schedule []*flightgraph.ScheduledLeg, zones map[string]string) (*Materialiser, error) {
	m := &Materialiser{seed: seed, zones: map[string]*time.Location{}}
	for code, z := range zones {
		loc, err := time.LoadLocation(z)
		if err != nil {
			return nil, fmt.Errorf("dataset: airport %s: %w", code, err)
		}
		m.zones[code] = loc
	}
	type key struct {
		c    string
		n    int
		from string
	}
	groups := map[key][]*flightgraph.ScheduledLeg{}
	var keys []key
	for _, l := range schedule {
		if _, ok := m.zones[l.OriginCode]; !ok {
			return nil, fmt.Errorf("dataset: schedule leg %s%d: unknown airport %s", l.CarrierCode, l.FlightNumber, l.OriginCode)
		}
		if !slices.Contains(m.carriers, l.CarrierCode) {
			m.carriers = append(m.carriers, l.CarrierCode)
		}
		k := key{l.CarrierCode, l.FlightNumber, l.PeriodFrom}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], l)
	}
	slices.Sort(m.carriers)
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].c != keys[j].c {
			return keys[i].c < keys[j].c
		}
		return keys[i].n < keys[j].n
	})
	for _, k := range keys {
		legs := groups[k]
		sort.Slice(legs, func(i, j int) bool { return legs[i].Sequence < legs[j].Sequence })
		m.flights = append(m.flights, legs)
	}
	return m, nil
}

// Flights returns the flights and legs of one schedule date (YYYY-MM-DD).
func (m *Materialiser) Flights(date string) ([]*flightgraph.Flight, []*flightgraph.FlightLeg, error) {
	day, err := time.Parse(flightgraph.DateLayout, date)
	if err != nil {
		return nil, nil, err
	}
	var (
		flights []*flightgraph.Flight
		legs    []*flightgraph.FlightLeg
	)
	for _, sched := range m.flights {
		if f, l := m.instance(sched, date, day, true); f != nil {
			flights, legs = append(flights, f), append(legs, l...)
		}
	}
	link(flights, legs)
	return flights, legs, nil
}

// instance is the flight of the schedule legs sched on one date (day is its midnight), with its
// legs; nil when the schedule does not fly that day. Operated, it is the flight as the window
// holds it (delays, cancellation, gates, airframe, drawn from the seed in that order); planned
// (operate false), as the schedule plans it, with none of those: what is sold beyond the window.
// A planned and an operated instance of the same flight have the same id, times and aircraft
// type unless the operated one is delayed past midnight (suffix D).
func (m *Materialiser) instance(sched []*flightgraph.ScheduledLeg, date string, day time.Time, operate bool) (*flightgraph.Flight, []*flightgraph.FlightLeg) {
	first := sched[0]
	weekday := strconv.Itoa((int(day.Weekday())+6)%7 + 1) // SSIM: 1 is Monday
	if date < first.PeriodFrom || date > first.PeriodTo || !strings.Contains(first.Days, weekday) {
		return nil, nil
	}
	fid := flightgraph.FlightID{Date: date, Carrier: first.CarrierCode, Number: first.FlightNumber}
	hh, mm := clock(first.DepartureLocal)
	dep := time.Date(day.Year(), day.Month(), day.Day(), hh, mm, 0, 0, m.zones[first.OriginCode])
	f := &flightgraph.Flight{ScheduleDate: date, CarrierCode: first.CarrierCode, FlightNumber: first.FlightNumber,
		OriginCode: first.OriginCode, DepartureUTC: dep.UTC(), Codeshares: m.codeshares(first)}
	// Operations: most flights leave on time, some late, a few are cancelled; a late first leg
	// delays the next.
	var r interface{ IntN(int) int } = noDraws{}
	cancelled, delay := false, 0
	if operate {
		r = rng(m.seed, "ops", fid.String())
		cancelled = r.IntN(1000) < 15
		switch p := r.IntN(100); {
		case cancelled:
		case p < 70:
			delay = r.IntN(5)
		case p < 92:
			delay = 5 + r.IntN(16)
		default:
			delay = 30 + r.IntN(150)
		}
	}
	// A flight expected to leave after its schedule date's local midnight operates with the
	// suffix D (delayed), which is part of its id.
	if f.DepartureUTC.Add(time.Duration(delay)*time.Minute).In(m.zones[first.OriginCode]).Format(flightgraph.DateLayout) > date {
		fid.Suffix = "D"
	}
	f.ID, f.Suffix = fid.String(), fid.Suffix
	km := 0
	var (
		arr  time.Time
		legs []*flightgraph.FlightLeg
	)
	for i, s := range sched {
		if i > 0 {
			dep = arr.Add(transitMinutes * time.Minute)
		}
		arr = dep.Add(time.Duration(s.BlockMinutes) * time.Minute)
		arrDelay := 0
		if operate && !cancelled {
			arrDelay = max(0, delay+r.IntN(21)-12)
		}
		leg := &flightgraph.FlightLeg{FlightID: f.ID, Sequence: s.Sequence, OriginCode: s.OriginCode, DestinationCode: s.DestinationCode,
			ScheduledDep: dep.UTC(), ScheduledArr: arr.UTC(), DepartureOffset: offset(dep, m.zones[s.OriginCode]),
			ArrivalOffset: offset(arr, m.zones[s.DestinationCode]), DepartureDelay: delay, ArrivalDelay: arrDelay, Cancelled: cancelled,
			ConfigurationCode: s.Configuration, ServiceType: s.ServiceType, DistanceKm: s.DistanceKm}
		if operate {
			leg.Registration = registration(s.CarrierCode, s.Configuration, r.IntN(AirframesPerConfiguration))
			leg.DepartureTerminal, leg.DepartureGate = stand(s.OriginCode, r.IntN(1<<20))
			leg.ArrivalTerminal, leg.ArrivalGate = stand(s.DestinationCode, r.IntN(1<<20))
		}
		legs = append(legs, leg)
		delay = max(0, arrDelay-transitMinutes/2) // slack at the stop absorbs part of the delay
		km += s.DistanceKm
	}
	last := sched[len(sched)-1]
	f.DestinationCode, f.ArrivalUTC, f.Haul = last.DestinationCode, arr.UTC(), haulOf(float64(km))
	return f, legs
}

// noDraws stands for the generator of a planned instance, which draws nothing.
type noDraws struct{}

func (noDraws) IntN(int) int { panic("dataset: a planned flight draws no operation") }

// codeshares are the designators the flight of first is sold under by the other carriers: a fifth
// of the flights, each under 5000 plus its number (numbers of 5000 and more are sold by their
// carrier alone).
func (m *Materialiser) codeshares(first *flightgraph.ScheduledLeg) string {
	if first.FlightNumber >= 5000 || rng(m.seed, "codeshare", first.CarrierCode, strconv.Itoa(first.FlightNumber)).IntN(5) != 0 {
		return ""
	}
	var out []string
	for _, c := range m.carriers {
		if c != first.CarrierCode {
			out = append(out, fmt.Sprintf("%s%04d", c, 5000+first.FlightNumber))
		}
	}
	return strings.Join(out, " ")
}

// link sets each flight's onward flight: the first flight of the day that its aircraft (the
// registration of its last leg) flies from its destination, leaving at least transitMinutes after
// it lands, and not taken already as another's onward flight; that one's previous flight is it.
func link(flights []*flightgraph.Flight, legs []*flightgraph.FlightLeg) {
	type end struct {
		reg, at string
		t       time.Time
	}
	first, last := map[string]end{}, map[string]end{}
	for _, l := range legs {
		if _, ok := first[l.FlightID]; !ok || l.Sequence == 1 {
			first[l.FlightID] = end{l.Registration, l.OriginCode, l.ScheduledDep}
		}
		if e, ok := last[l.FlightID]; !ok || l.ScheduledArr.After(e.t) {
			last[l.FlightID] = end{l.Registration, l.DestinationCode, l.ScheduledArr}
		}
	}
	// The flights each aircraft starts from each airport, by departure.
	starts := map[[2]string][]*flightgraph.Flight{}
	for _, f := range flights {
		dep := first[f.ID]
		k := [2]string{dep.reg, dep.at}
		starts[k] = append(starts[k], f)
	}
	for _, list := range starts {
		slices.SortFunc(list, func(a, b *flightgraph.Flight) int { return a.DepartureUTC.Compare(b.DepartureUTC) })
	}
	for _, f := range flights {
		arr := last[f.ID]
		for _, g := range starts[[2]string{arr.reg, arr.at}] {
			if g.PreviousFlightID == "" && g != f && !first[g.ID].t.Before(arr.t.Add(transitMinutes*time.Minute)) {
				f.OnwardFlightID, g.PreviousFlightID = g.ID, f.ID
				break
			}
		}
	}
}

func clock(hhmm string) (int, int) {
	h, _ := strconv.Atoi(hhmm[:2])
	m, _ := strconv.Atoi(hhmm[3:])
	return h, m
}

// offset is the UTC offset in minutes at loc at time t.
func offset(t time.Time, loc *time.Location) int {
	_, off := t.In(loc).Zone()
	return off / 60
}

// hubStands are the terminals and gate prefixes of the hubs; other airports get generic ones.
var hubStands = map[string][][2]string{
	"AMS": {{"1", "B"}, {"1", "C"}, {"2", "D"}, {"2", "E"}, {"3", "F"}, {"3", "G"}, {"3", "H"}},
	"CDG": {{"2E", "K"}, {"2E", "L"}, {"2E", "M"}, {"2F", "F"}, {"2G", "G"}, {"2D", "D"}},
}

// stand picks a terminal and gate at an airport.
func stand(airport string, pick int) (string, string) {
	opts, ok := hubStands[airport]
	if !ok {
		opts = [][2]string{{"1", "A"}, {"1", "B"}, {"2", "C"}}
	}
	o := opts[pick%len(opts)]
	return o[0], fmt.Sprintf("%s%02d", o[1], 1+(pick/len(opts))%40)
}

// AirframesPerConfiguration is how many airframes fly each configuration of the fleet.
const AirframesPerConfiguration = 12

// registration names the nth airframe of a configuration: Dutch marks for XX's fleet, French for
// YY's. The letters after the prefix are a letter of the configuration and the airframe's serial
// in its carrier's fleet (the configuration's place among the carrier's, times
// AirframesPerConfiguration, plus n), so that one registration names one airframe.
func registration(carrier, configuration string, n int) string {
	prefix := "PH-"
	if carrier[0] == 'Y' {
		prefix = "F-H"
	}
	first := configuration[0]
	if first >= '0' && first <= '9' {
		first = 'A' + (first - '0')
	}
	k := airframeSerial[configuration]*AirframesPerConfiguration + n
	return fmt.Sprintf("%s%c%c%c", prefix, first, 'A'+byte(k/26%26), 'A'+byte(k%26))
}

// airframeSerial is each configuration's place among its carrier's configurations.
var airframeSerial = func() map[string]int {
	out, next := map[string]int{}, map[string]int{}
	for _, c := range configurations {
		out[c.Code] = next[c.Carrier]
		next[c.Carrier]++
	}
	return out
}()

// Airframes returns, for each registration, the configuration of the airframe it names in the
// demo fleet, or "" where it names none.
func Airframes(registrations []string) []string {
	out := make([]string, len(registrations))
	for i, r := range registrations {
		out[i] = airframes[r]
	}
	return out
}

// airframes maps every registration of the fleet to its configuration.
var airframes = func() map[string]string {
	out := map[string]string{}
	for _, c := range configurations {
		for n := range AirframesPerConfiguration {
			out[registration(c.Carrier, c.Code, n)] = c.Code
		}
	}
	return out
}()
