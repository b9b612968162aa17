package flightgraph

import (
	"context"
	"strings"
)

// CabinClass is a commercial cabin.
type CabinClass string

const (
	CabinEconomy  CabinClass = "ECONOMY"
	CabinPremium  CabinClass = "PREMIUM"
	CabinBusiness CabinClass = "BUSINESS"
	CabinFirst    CabinClass = "FIRST"
)

// CabinClasses lists the cabin classes from the front of the aircraft to the back.
var CabinClasses = []CabinClass{CabinFirst, CabinBusiness, CabinPremium, CabinEconomy}

// Letter is the one-letter code of the class in a physical configuration string ("C034M286").
func (c CabinClass) Letter() string {
	switch c {
	case CabinFirst:
		return "F"
	case CabinBusiness:
		return "C"
	case CabinPremium:
		return "W"
	}
	return "M"
}

// ParseCabinClass accepts a class name in any case; it returns ECodeCabinClassNotFound naming param.
func ParseCabinClass(param, s string) (CabinClass, error) {
	c := CabinClass(strings.ToUpper(strings.TrimSpace(s)))
	for _, k := range CabinClasses {
		if c == k {
			return c, nil
		}
	}
	return "", ParamErrorf(ECodeCabinClassNotFound, param, "cabin class %q is not one of FIRST, BUSINESS, PREMIUM, ECONOMY", s)
}

// AircraftType is a type of aircraft in the fleet.
type AircraftType struct {
	Code string `db:"code"` // IATA type code, e.g. "772"
	ICAO string `db:"icao"`
	Name string `db:"name"`
	Haul string `db:"haul"` // SH, MH or LH
}

// Aircraft is an aircraft configuration version (ACV): one carrier's cabin layout of one type; the
// GraphQL type AircraftConfiguration.
type Aircraft struct {
	Configuration string `db:"code"` // the ACV, e.g. "77S"
	TypeCode      string `db:"type_code"`
	TypeName      string `db:"type_name"`
	ICAO          string `db:"icao"`
	CarrierCode   string `db:"carrier"`
	Name          string `db:"name"`
	Wifi          bool   `db:"wifi"`
	Layout        string `db:"layout"` // physical passenger configuration, e.g. "C034W024M210"
}

// IsEntity marks Aircraft as an Apollo Federation entity; gqlgen's federation plugin requires it.
func (Aircraft) IsEntity() {}

// Airframe is one aircraft, named by its registration, and the configuration it flies in; the
// GraphQL type Aircraft.
type Airframe struct {
	Registration string
	*Aircraft
}

// IsEntity marks Airframe as an Apollo Federation entity.
func (Airframe) IsEntity() {}

// AircraftConfiguration is the configuration the airframe flies in.
func (a *Airframe) AircraftConfiguration() *Aircraft { return a.Aircraft }

// Cabin is one cabin of a configuration, with the cabin product whose amenities it offers.
type Cabin struct {
	Configuration string     `db:"configuration"`
	CabinClass    CabinClass `db:"class"`
	Seats         int        `db:"seats"`
	Product       string     `db:"product"`
}

// AmenityCategory groups amenities.
type AmenityCategory string

const (
	AmenitySeat          AmenityCategory = "SEAT"
	AmenityMeal          AmenityCategory = "MEAL"
	AmenityEntertainment AmenityCategory = "ENTERTAINMENT"
	AmenityConnectivity  AmenityCategory = "CONNECTIVITY"
	AmenityComfort       AmenityCategory = "COMFORT"
)

// Amenity is one element of a cabin product's offer, with rich text content.
type Amenity struct {
	Product     string          `db:"product"`
	CabinClass  CabinClass      `db:"class"` // the class of the cabin product
	Category    AmenityCategory `db:"category"`
	Feature     string          `db:"feature"`
	Name        string          `db:"name"`
	Description string          `db:"description"`
	Weight      int             `db:"weight"`
}

// AircraftStore reads the fleet. Batch lookups return one entry per key, in the order of the keys.
type AircraftStore interface {
	// AircraftByConfigurations returns the configuration of each code, nil where none exists.
	AircraftByConfigurations(ctx context.Context, codes []string) ([]*Aircraft, error)
	// CabinsByConfigurations returns, for each configuration, its cabins from front to back.
	CabinsByConfigurations(ctx context.Context, codes []string) ([][]*Cabin, error)
	// AmenitiesByProducts returns, for each cabin product, its amenities by descending weight.
	AmenitiesByProducts(ctx context.Context, products []string) ([][]*Amenity, error)
	// AllAircraft returns every configuration ordered by code.
	AllAircraft(ctx context.Context) ([]*Aircraft, error)
}
