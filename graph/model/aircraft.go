package model

import "github.com/flightgraph/flightgraph"

// Airframe is an airframe as the flight subgraph serves it (the GraphQL type Aircraft): made by
// graph.Loaders, with its configuration's cabins as the loaders fetched them, so that a board's
// aircraft and cabins are read in line as plain methods, not through gqlgen's resolver path (a
// deferred closure and panic guard per field, and a goroutine for each but one of an object's
// selected resolver fields).
type Airframe struct {
	*flightgraph.Airframe
	cabins hop[[]*Cabin]
}

// NewAirframe returns a with its cabins, or the error of loading them. An airframe made without
// them ({Airframe: a}) has none fetched.
func NewAirframe(a *flightgraph.Airframe, cabins []*Cabin, err error) *Airframe {
	return &Airframe{Airframe: a, cabins: hop[[]*Cabin]{cabins, err, true}}
}

// Cabins returns the cabins fetched for the airframe's configuration.
func (a *Airframe) Cabins() ([]*Cabin, error) {
	return a.cabins.get("the cabins of configuration", a.Configuration, a.Registration)
}

// IsEntity marks Airframe as an Apollo Federation entity.
func (Airframe) IsEntity() {}

// Cabin is a cabin as the flight subgraph serves it, with its product's amenities as the loaders
// fetched them.
type Cabin struct {
	*flightgraph.Cabin
	amenities hop[[]*flightgraph.Amenity]
}

// NewCabin returns c with its product's amenities, or the error of loading them. A cabin made
// without them ({Cabin: c}) has none fetched.
func NewCabin(c *flightgraph.Cabin, amenities []*flightgraph.Amenity, err error) *Cabin {
	return &Cabin{Cabin: c, amenities: hop[[]*flightgraph.Amenity]{amenities, err, true}}
}

// Amenities returns the amenities of the cabin's product, of one category if category is set.
func (c *Cabin) Amenities(category *flightgraph.AmenityCategory) ([]*flightgraph.Amenity, error) {
	all, err := c.amenities.get("the amenities of product", c.Product, c.Configuration)
	if err != nil || category == nil {
		return all, err
	}
	var out []*flightgraph.Amenity
	for _, a := range all {
		if a.Category == *category {
			out = append(out, a)
		}
	}
	return out, nil
}
