package dataset

import (
	"fmt"
	"sort"
	"time"

	"github.com/flightgraph/flightgraph"
)

// transitMinutes is the ground time at the intermediate stop of a multi-leg flight.
const transitMinutes = 90

// copyCodes give the second character of the carrier codes of the scaled copies of the network.
const copyCodes = "123456789ABCDEFGHIJKLMNOPQRSTUVWZ"

type network struct {
	carriers []*flightgraph.Carrier
	schedule []*flightgraph.ScheduledLeg
	routes   []*flightgraph.Route
}

// place is an airport with its zone, for the network builder.
type place struct {
	airportRow
	loc *time.Location
}

// haulOf classifies a distance.
func haulOf(km float64) string {
	switch {
	case km < 2000:
		return "SHORT"
	case km < 4500:
		return "MEDIUM"
	}
	return "LONG"
}

// blockMinutes is the scheduled block time for a distance at a type's block speed: taxi out and
// in plus flying time, rounded up to five minutes.
func blockMinutes(km float64, speedKmh int) int {
	m := 25 + int(km/float64(speedKmh)*60)
	return (m + 4) / 5 * 5
}

func buildNetwork(opts Options, today time.Time) network {
	places := map[string]*place{}
	var codes []string
	for _, a := range airports {
		loc, err := time.LoadLocation(a.TimeZone)
		if err != nil {
			panic(fmt.Sprintf("dataset: airport %s: %v", a.Code, err)) // guarded by the data's tests
		}
		places[a.Code] = &place{airportRow: a, loc: loc}
		codes = append(codes, a.Code)
	}
	sort.Strings(codes)
	types := map[string]aircraftTypeRow{}
	for _, t := range aircraftTypes {
		types[t.Code] = t
	}
	year := today.Year()
	periodFrom := fmt.Sprintf("%04d-01-01", year-1)
	periodTo := fmt.Sprintf("%04d-12-31", year+1)
	ref := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)

	var n network
	for k := 0; k < opts.Scale; k++ {
		for _, base := range carriers {
			c := &flightgraph.Carrier{Code: base.Code, Name: base.Name, HubCode: base.Hub}
			if k > 0 {
				c.Code = base.Code[:1] + copyCodes[k-1:k]
				c.Name = fmt.Sprintf("%s %d", base.Name, k+1)
			}
			n.carriers = append(n.carriers, c)
			b := carrierBuilder{seed: opts.Seed, carrier: c, base: base.Code, places: places, types: types,
				periodFrom: periodFrom, periodTo: periodTo, ref: ref, nextLong: 1, nextShort: 1001}
			b.build(codes)
			n.schedule = append(n.schedule, b.legs...)
		}
	}
	n.routes = routesOf(n.schedule)
	return n
}

// carrierBuilder builds one carrier's schedule around its hub.
type carrierBuilder struct {
	seed                 int64
	carrier              *flightgraph.Carrier
	base                 string // carrier whose fleet it flies
	places               map[string]*place
	types                map[string]aircraftTypeRow
	periodFrom, periodTo string
	ref                  time.Time
	nextLong, nextShort  int
	legs                 []*flightgraph.ScheduledLeg
}

// hop is one leg to plan: from, to, distance.
type hop struct {
	from, to string
	km       float64
}

func (b *carrierBuilder) build(codes []string) {
	hub := b.carrier.HubCode
	var far []string
	for _, d := range codes {
		if d == hub || (b.places[d].City == b.places[hub].City) {
			continue
		}
		r := rng(b.seed, "serve", b.carrier.Code, d)
		if r.Float64() > 0.9 && !isHub(d) {
			continue
		}
		km := b.km(hub, d)
		pick := r.IntN(1000)
		cfg, ok := b.pickConfiguration(km, pick)
		if ok && haulOf(km) == "SHORT" {
			cfg = b.sizedForDemand(cfg, km, d, pick)
		}
		if !ok {
			far = append(far, d)
			continue
		}
		haul := haulOf(km)
		freq, days := b.frequency(haul, d, r.IntN(1000), r.IntN(1000))
		if b.noAirRoute(hub, d, km) {
			// Nobody flies it: the train or the road wins. Its flight numbers stay unused, so that
			// the other routes keep theirs.
			for range freq {
				b.number(haul)
			}
			continue
		}
		span := 15 * 60 / freq
		waves := bankSlots(freq)
		overnight := 0           // returns of this route that come back on the next morning
		landed := map[int]bool{} // the banks the route's returns land in the same day
		for i := 0; i < freq; i++ {
			jitter := r.IntN(min(span, 60)/5 + 1)
			w := waves[i]
			dep := banks[w.bank] + w.first + jitter%(w.width/5+1)*5
			if haul == "LONG" {
				// Long-haul leaves at the end of a morning or midday bank's outbound wave, after
				// the inbound wave's passengers have connected.
				pick := r.IntN(12)
				dep = banks[longHaulBanks[pick%len(longHaulBanks)]] + pick/len(longHaulBanks)*5
			}
			num := b.number(haul)
			back := b.flight(num, days, cfg, []hop{{hub, d, km}}, dep)
			lead := r.IntN(4)
			turn := b.turnIntoBank(haul, dep, back, blockMinutes(km, b.types[cfg.Type].SpeedKmh), lead, landed, &overnight)
			b.flight(num+1, days, cfg, []hop{{d, hub, km}}, back+turn)
		}
	}
	// Destinations beyond every aircraft's range get a one-stop flight through the served
	// long-haul airport that makes the shortest trip.
	for _, d := range far {
		via, best := "", 0.0
		for _, v := range codes {
			if v == hub || v == d || haulOf(b.km(hub, v)) != "LONG" {
				continue
			}
			k1, k2 := b.km(hub, v), b.km(v, d)
			if _, ok := b.pickConfiguration(max(k1, k2), 0); !ok {
				continue
			}
			if t := k1 + k2; via == "" || t < best {
				via, best = v, t
			}
		}
		if via == "" {
			continue
		}
		k1, k2 := b.km(hub, via), b.km(via, d)
		cfg, _ := b.pickConfiguration(max(k1, k2), rng(b.seed, "far", b.carrier.Code, d).IntN(1000))
		num := b.number("LONG")
		arr := b.flight(num, "1234567", cfg, []hop{{hub, via, k1}, {via, d, k2}}, banks[longHaulBanks[1]]+5)
		b.flight(num+1, "1234567", cfg, []hop{{d, via, k2}, {via, hub, k1}}, arr+150)
	}
}

// majorCities are the short-haul airports of the big markets, which hub carriers serve in most
// of their banks: capitals and the largest business and leisure cities within Europe.
var majorCities = map[string]bool{
	"LHR": true, "LGW": true, "FRA": true, "MUC": true, "MAD": true, "BCN": true, "FCO": true, "MXP": true, "LIN": true,
	"ZRH": true, "GVA": true, "VIE": true, "CPH": true, "ARN": true, "OSL": true, "HEL": true, "DUB": true, "LIS": true,
	"ATH": true, "IST": true, "WAW": true, "PRG": true, "BUD": true, "MAN": true, "EDI": true, "BER": true, "HAM": true,
	"NCE": true, "TLS": true, "BRU": true, "DUS": true, "STR": true, "PMI": true, "AGP": true, "AMS": true, "CDG": true,
}

// Below these distances a route is not flown: under minAirRouteKm nowhere (AMS–Rotterdam is
// 45 km), and within one country under minDomesticKm, where carriers leave the trip to rail
// (AMS–Eindhoven, AMS–Maastricht, CDG–Lille). Airlines' shortest scheduled trunk routes out of
// Europe's hubs are cross-border hops of 150–300 km (AMS–Brussels, AMS–Düsseldorf, CDG–Luxembourg).
const (
	minAirRouteKm = 150
	minDomesticKm = 300
)

// noAirRoute reports whether a route from hub to d is too short to be flown (minAirRouteKm,
// minDomesticKm).
func (b *carrierBuilder) noAirRoute(hub, d string, km float64) bool {
	return km < minAirRouteKm || km < minDomesticKm && countryOfCity(b.places[hub].City) == countryOfCity(b.places[d].City)
}

// countryOfCity returns the country of a city code, "" if the city is unknown.
func countryOfCity(city string) string { return cityCountries[city] }

// cityCountries maps each city code to its country.
var cityCountries = func() map[string]string {
	m := make(map[string]string, len(cities))
	for _, c := range cities {
		m[c.Code] = c.Country
	}
	return m
}()

func isHub(code string) bool {
	for _, c := range carriers {
		if c.Hub == code {
			return true
		}
	}
	return false
}

func (b *carrierBuilder) km(from, to string) float64 {
	p, q := b.places[from], b.places[to]
	return distanceKm(p.Latitude, p.Longitude, q.Latitude, q.Longitude)
}

// pickConfiguration chooses one of the carrier's configurations for a route: the hauls' own
// types first, any type with the range otherwise.
func (b *carrierBuilder) pickConfiguration(km float64, pick int) (configurationRow, bool) {
	want := map[string][]string{"SHORT": {"SH", "MH"}, "MEDIUM": {"MH", "LH"}, "LONG": {"LH"}}[haulOf(km)]
	for _, h := range want {
		var fit []configurationRow
		for _, c := range configurations {
			t := b.types[c.Type]
			if c.Carrier == b.base && t.Haul == h && float64(t.RangeKm) >= km {
				fit = append(fit, c)
			}
		}
		if len(fit) > 0 {
			return fit[pick%len(fit)], true
		}
	}
	return configurationRow{}, false
}

// sizedForDemand returns, for a short-haul route to d, a configuration of the carrier's short-
// and medium-haul types that fly the distance, sized for the route's demand: one of the larger
// half (by seats) to the other hub and the big cities, one of the smaller half (the regional
// jets, where the carrier has them) elsewhere; cfg when the carrier has none.
func (b *carrierBuilder) sizedForDemand(cfg configurationRow, km float64, d string, pick int) configurationRow {
	var fit []configurationRow
	for _, c := range configurations {
		t := b.types[c.Type]
		if c.Carrier == b.base && (t.Haul == "SH" || t.Haul == "MH") && float64(t.RangeKm) >= km {
			fit = append(fit, c)
		}
	}
	if len(fit) == 0 {
		return cfg
	}
	sort.SliceStable(fit, func(i, j int) bool { return seatsOf(fit[i]) < seatsOf(fit[j]) })
	half := fit[:(len(fit)+1)/2]
	if isHub(d) || majorCities[d] {
		half = fit[len(fit)/2:]
	}
	return half[pick%len(half)]
}

// seatsOf is the seats of all a configuration's cabins.
func seatsOf(c configurationRow) int {
	n := 0
	for _, cabin := range c.Cabins {
		n += cabin.Seats
	}
	return n
}

// frequency returns the daily frequency and days of operation of a route.
func (b *carrierBuilder) frequency(haul, dest string, r1, r2 int) (int, string) {
	switch haul {
	case "SHORT":
		// Demand sets the frequency: the other hub ten times a day, the big cities in most of
		// the hub's banks, the rest less often.
		f := 3 + r1%6
		switch {
		case isHub(dest):
			f = 10
		case majorCities[dest]:
			f = 8 + r1%4
		}
		if r2%100 < 12 && !majorCities[dest] && !isHub(dest) {
			return f, "12345"
		}
		return f, "1234567"
	case "MEDIUM":
		return 1 + r1%3, "1234567"
	}
	switch r2 % 10 {
	case 0:
		return 1, "1357"
	case 1:
		return 1, "2467"
	case 2:
		return 1, "13567"
	}
	return 1, "1234567"
}

func (b *carrierBuilder) number(haul string) int {
	if haul == "LONG" {
		n := b.nextLong
		b.nextLong += 2
		return n
	}
	n := b.nextShort
	b.nextShort += 2
	return n
}

// flight adds the schedule legs of one flight number leaving its first origin at depMinutes local
// time, and returns the local time (minutes after the schedule date's midnight, at the last
// destination) of its arrival.
func (b *carrierBuilder) flight(num int, days string, cfg configurationRow, hops []hop, depMinutes int) int {
	speed := b.types[cfg.Type].SpeedKmh
	// A flight's schedule date is the local date its first leg leaves: a return that would leave
	// after midnight leaves at that time on its own schedule date.
	depMinutes %= 24 * 60
	first := b.places[hops[0].from]
	dep := time.Date(b.ref.Year(), b.ref.Month(), b.ref.Day(), 0, depMinutes, 0, 0, first.loc)
	start := time.Date(b.ref.Year(), b.ref.Month(), b.ref.Day(), 0, 0, 0, 0, first.loc)
	var arr time.Time
	for i, h := range hops {
		if i > 0 {
			dep = arr.Add(transitMinutes * time.Minute)
		}
		block := blockMinutes(h.km, speed)
		arr = dep.Add(time.Duration(block) * time.Minute)
		from, to := b.places[h.from], b.places[h.to]
		ld, la := dep.In(from.loc), arr.In(to.loc)
		b.legs = append(b.legs, &flightgraph.ScheduledLeg{
			CarrierCode: b.carrier.Code, FlightNumber: num, Sequence: i + 1, OriginCode: h.from, DestinationCode: h.to,
			DepartureLocal: ld.Format("15:04"), ArrivalLocal: la.Format("15:04"),
			DepartureDayShift: dayDiff(start, ld), ArrivalDayOffset: dayDiff(start, la),
			Days: days, PeriodFrom: b.periodFrom, PeriodTo: b.periodTo, Configuration: cfg.Code, ServiceType: "J",
			DistanceKm: int(h.km + 0.5), BlockMinutes: block,
		})
	}
	last := b.places[hops[len(hops)-1].to]
	la := arr.In(last.loc)
	return dayDiff(start, la)*24*60 + la.Hour()*60 + la.Minute()
}

// dayDiff is the number of calendar days from the date of start to the local date of t.
func dayDiff(start, t time.Time) int {
	a := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)
	c := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return int(c.Sub(a).Hours() / 24)
}

// routesOf sums the schedule into routes: one per carrier and airport pair.
func routesOf(legs []*flightgraph.ScheduledLeg) []*flightgraph.Route {
	type key struct{ c, o, d string }
	m := map[key]*flightgraph.Route{}
	var keys []key
	for _, l := range legs {
		k := key{l.CarrierCode, l.OriginCode, l.DestinationCode}
		r, ok := m[k]
		if !ok {
			r = &flightgraph.Route{CarrierCode: l.CarrierCode, OriginCode: l.OriginCode, DestinationCode: l.DestinationCode,
				DistanceKm: l.DistanceKm, BlockMinutes: l.BlockMinutes, Haul: haulOf(float64(l.DistanceKm))}
			m[k] = r
			keys = append(keys, k)
		}
		r.WeeklyFlights += len(l.Days)
	}
	out := make([]*flightgraph.Route, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.OriginCode != b.OriginCode {
			return a.OriginCode < b.OriginCode
		}
		if a.DestinationCode != b.DestinationCode {
			return a.DestinationCode < b.DestinationCode
		}
		return a.CarrierCode < b.CarrierCode
	})
	return out
}

// A hub carrier works its hub in banks (as KLM at Amsterdam and Air France at Paris do): a wave
// of flights from the spokes lands, its passengers change planes, and a wave of flights leaves
// for the spokes and, in the morning and midday banks, for the long-haul destinations. The last
// evening wave's aircraft stay the night at the spokes and come back in the next morning's first
// inbound waves; the long-haul flights come back overnight into whichever bank they reach first.
//
// banks are the local times (minutes after midnight at the hub) at the middle of each bank's
// outbound wave: short- and medium-haul flights leave within waveMinutes either side, long-haul
// ones in the quarter of an hour after the bank time. The bank's inbound wave lands from
// inboundEarliest to inboundEarliest-15 minutes before the bank time, so that every arrival
// connects onto every departure of the bank in 50 minutes (travel.MinConnection) to two hours.
var banks = []int{7 * 60, 10 * 60, 12 * 60, 14 * 60, 16 * 60, 18 * 60, 20 * 60, 21*60 + 45}

// longHaulBanks are the indices in banks of the banks whose outbound waves carry long-haul flights.
var longHaulBanks = []int{1, 2, 3}

const (
	// waveMinutes is how far either side of its bank time a short-haul departure leaves.
	waveMinutes = 25
	// inboundEarliest is how long before its bank time a bank's inbound wave starts landing; the
	// wave lasts a quarter of an hour.
	inboundEarliest = 90
	// minTurn and minLongTurn are the shortest turnarounds at a spoke of a short- or medium-haul
	// and a long-haul aircraft.
	minTurn, minLongTurn = 40, 120
	// firstSpokeDeparture is the earliest local time a short-haul flight leaves a spoke for the
	// hub (the night curfews of Europe's airports).
	firstSpokeDeparture = 6 * 60
)

// wave is where one of a route's daily departures leaves: the index of its bank in banks, and
// the earliest offset from the bank time and the width (minutes) of its part of the wave.
type wave struct {
	bank, first, width int
}

// bankSlots spreads a route's f daily departures over the banks: each in its own bank, spread
// over the day, while f is at most the number of banks; beyond that every bank has one, and the
// extra ones share a bank, one in each half of its wave.
func bankSlots(f int) []wave {
	count := make([]int, len(banks))
	for i := range min(f, len(banks)) {
		count[i*len(banks)/min(f, len(banks))]++
	}
	for i := range max(f-len(banks), 0) {
		count[i*len(banks)/(f-len(banks))]++
	}
	var out []wave
	for bank, n := range count {
		switch n {
		case 1:
			out = append(out, wave{bank, -waveMinutes, 2 * waveMinutes})
		case 2:
			out = append(out, wave{bank, -waveMinutes, waveMinutes - 5}, wave{bank, 5, waveMinutes - 5})
		}
	}
	return out
}

// turnIntoBank returns the time an aircraft waits at the spoke, so that the return of a flight
// that left the hub at dep (local minutes at the hub) and reached the spoke at back (local minutes
// at the spoke) lands in a bank's inbound wave (lead, from 0 to 3, places it in the wave): the
// first it reaches after the shortest turnaround that none of the route's returns landed in the
// same day (landed), so that the route feeds as many banks as it can. A short-haul return that
// reaches none the same day comes back the next morning, the route's first such return into the
// first bank a spoke reaches after its curfew, the next into the bank after; overnight counts them.
func (b *carrierBuilder) turnIntoBank(haul string, dep, back, block, lead int, landed map[int]bool, overnight *int) int {
	turn := minTurn
	if haul == "LONG" {
		turn = minLongTurn
	}
	earliest := dep + 2*block + turn // at the hub, local minutes from the day of dep
	offset := dep + block - back     // the hub's local time less the spoke's
	landing := func(day, bank int) int { return day*24*60 + banks[bank] - inboundEarliest + lead*5 }
	// leaves reports whether a return landing at the hub at minute at leaves the spoke after its
	// curfew (short- and medium-haul only).
	leaves := func(at int) bool {
		return haul == "LONG" || ((at-block-offset)%(24*60)+24*60)%(24*60) >= firstSpokeDeparture
	}
	skip := 0
	for day := 0; ; day++ {
		for bank := range banks {
			at := landing(day, bank)
			if at < earliest || !leaves(at) || day == 0 && landed[bank] {
				continue
			}
			if day == 0 {
				landed[bank] = true
			}
			if day > 0 && haul != "LONG" && skip < *overnight {
				skip++
				continue
			}
			if day > 0 && haul != "LONG" {
				*overnight++
			}
			return at - block - offset - back
		}
	}
}
