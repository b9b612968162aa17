// Package dataset generates the demo and benchmark data set: real airports, a fleet with cabins
// and amenities, an SSIM-like schedule of two hub carriers, and flight instances for a rolling
// window of dates. Everything is derived from a seed: the same seed, scale and dates give the
// same rows.
package dataset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
	_ "time/tzdata" // time zones must load on machines without a zoneinfo database

	"github.com/flightgraph/flightgraph"
)

// DefaultSeed is the seed of the demo data set.
const DefaultSeed = 20261122

// MaxScale bounds Options.Scale: each extra copy of the network gets its own carrier codes.
const MaxScale = 32

// Window of materialised schedule dates around today.
const (
	DaysBack  = 7
	DaysAhead = 30
)

// Options select the data set.
type Options struct {
	Seed  int64
	Scale int // 1 is the demo network; N multiplies it with N-1 extra carrier pairs
	// DaysBack and DaysAhead set the window Seed materialises; both zero means the standard
	// window. Tests use a narrow one.
	DaysBack, DaysAhead int
}

// Validate checks the options and fills in defaults.
func (o *Options) Validate() error {
	if o.Scale == 0 {
		o.Scale = 1
	}
	if o.DaysBack == 0 && o.DaysAhead == 0 {
		o.DaysBack, o.DaysAhead = DaysBack, DaysAhead
	}
	if o.DaysBack < 0 || o.DaysAhead < 0 || o.DaysBack > 366 || o.DaysAhead > 366 {
		return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "days", "the window must be between 0 and 366 days on each side")
	}
	if o.Scale < 1 || o.Scale > MaxScale {
		return flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "scale", "scale must be between 1 and %d, got %d", MaxScale, o.Scale)
	}
	return nil
}

// Generate builds the data set (places, fleet, schedule, routes) of opts, with schedule
// periods around today.
func Generate(opts Options, today time.Time) (*flightgraph.Dataset, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	ref := &flightgraph.Dataset{}
	for _, c := range countries {
		ref.Countries = append(ref.Countries, &flightgraph.Country{Code: c.Code, Name: c.Name, AreaCode: c.AreaCode, Currency: c.Currency,
			Euro: c.Euro, EU: c.EU, Schengen: c.Schengen, Labels: flightgraph.Labels{LabelEN: c.NameEN, LabelFR: c.NameFR, LabelNL: c.NameNL}})
	}
	cityCountry := map[string]string{}
	for _, c := range cities {
		cityCountry[c.Code] = c.Country
		ref.Cities = append(ref.Cities, &flightgraph.City{Code: c.Code, Name: c.Name, CountryCode: c.Country,
			Labels: flightgraph.Labels{LabelEN: c.NameEN, LabelFR: c.NameFR, LabelNL: c.NameNL}})
	}
	hubs := map[string]bool{}
	for _, c := range carriers {
		hubs[c.Hub] = true
	}
	for _, a := range airports {
		ref.Airports = append(ref.Airports, &flightgraph.Airport{Code: a.Code, Name: a.Name, CityCode: a.City, CountryCode: cityCountry[a.City],
			Latitude: a.Latitude, Longitude: a.Longitude, TimeZone: a.TimeZone, Hub: hubs[a.Code]})
	}
	for _, t := range aircraftTypes {
		ref.AircraftTypes = append(ref.AircraftTypes, &flightgraph.AircraftType{Code: t.Code, ICAO: t.ICAO, Name: t.Name, Haul: t.Haul})
	}
	types := map[string]aircraftTypeRow{}
	for _, t := range aircraftTypes {
		types[t.Code] = t
	}
	for _, c := range configurations {
		ref.Aircraft = append(ref.Aircraft, &flightgraph.Aircraft{Configuration: c.Code, TypeCode: c.Type, TypeName: types[c.Type].Name,
			ICAO: types[c.Type].ICAO, CarrierCode: c.Carrier, Name: c.Name, Wifi: c.Wifi, Layout: layout(c.Cabins)})
		for _, cab := range sortedCabins(c.Cabins) {
			ref.Cabins = append(ref.Cabins, &flightgraph.Cabin{Configuration: c.Code, CabinClass: flightgraph.CabinClass(cab.Class), Seats: cab.Seats, Product: cab.Product})
		}
	}
	for _, p := range products {
		for _, a := range p.Amenities {
			ref.Amenities = append(ref.Amenities, &flightgraph.Amenity{Product: p.Code, Category: flightgraph.AmenityCategory(strings.ToUpper(a.Category)),
				Feature: a.Feature, Name: a.Name, Description: a.Description, Weight: a.Weight})
		}
	}
	net := buildNetwork(opts, today)
	ref.Carriers, ref.Schedule, ref.Routes = net.carriers, net.schedule, net.routes
	return ref, nil
}

// layout is the physical passenger configuration string, e.g. "C034W024M210".
func layout(cabins []cabinRow) string {
	var b strings.Builder
	for _, c := range sortedCabins(cabins) {
		fmt.Fprintf(&b, "%s%03d", flightgraph.CabinClass(c.Class).Letter(), c.Seats)
	}
	return b.String()
}

// sortedCabins orders cabins from the front of the aircraft to the back.
func sortedCabins(cabins []cabinRow) []cabinRow {
	rank := map[string]int{}
	for i, c := range flightgraph.CabinClasses {
		rank[string(c)] = i
	}
	out := append([]cabinRow(nil), cabins...)
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i].Class] < rank[out[j].Class] })
	return out
}

// distanceKm is the great-circle distance between two points.
func distanceKm(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6371.0
	rad := math.Pi / 180
	dlat, dlon := (lat2-lat1)*rad, (lon2-lon1)*rad
	a := math.Sin(dlat/2)*math.Sin(dlat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dlon/2)*math.Sin(dlon/2)
	return 2 * r * math.Asin(math.Sqrt(a))
}

// rng returns a deterministic generator for one purpose and key under a seed.
func rng(seed int64, parts ...string) *rand.Rand {
	h := uint64(1469598103934665603)
	for _, p := range parts {
		for i := 0; i < len(p); i++ {
			h ^= uint64(p[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(uint64(seed), h))
}
