package rest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/flightgraph/flightgraph"
)

// The baggage allowance API (/opendata/baggages/allowances): its six operations are one path,
// told apart by the type parameter, and each a path of its own under the spec's name too
// (baggageOperations), with the original's shared header section (host, itinerary,
// travel class) and, per passenger type, the allowances by bound and segment.

type (
	baggageDoc struct {
		Host        string           `json:"host"`
		Itinerary   itineraryRefDoc  `json:"itinerary"`
		TravelClass []travelClassDoc `json:"travelClass"`
		Links       links            `json:"_links"`
	}
	itineraryRefDoc struct {
		Origin      string `json:"origin"`
		Destination string `json:"destination"`
	}
	travelClassDoc struct {
		TravelClass string         `json:"travelClass"`
		FareFamily  string         `json:"fareFamily"`
		Passenger   []bagPassenger `json:"passenger"`
	}
	bagPassenger struct {
		PaxType    string        `json:"paxType"`
		ProgramID  string        `json:"programId,omitempty"`
		TierLevel  string        `json:"tierLevel,omitempty"`
		Allowances allowancesDoc `json:"allowances"`
	}
	// allowancesDoc holds the parts the type asks for: baseAllowance, loyaltyAllowance and
	// paidOptions, each by bound.
	allowancesDoc struct {
		Base    *boundBagsDoc `json:"baseAllowance,omitempty"`
		Loyalty *boundBagsDoc `json:"loyaltyAllowance,omitempty"`
		Paid    *boundBagsDoc `json:"paidOptions,omitempty"`
	}
	boundBagsDoc struct {
		OutBound bagSegmentsDoc `json:"outBound"`
	}
	bagSegmentsDoc struct {
		Segments []bagSegmentDoc `json:"segments"`
	}
	bagSegmentDoc struct {
		Origin       string          `json:"origin"`
		Destination  string          `json:"destination"`
		FlightNumber string          `json:"flightNumber"`
		Products     []bagProductDoc `json:"products"`
	}
	bagProductDoc struct {
		ProductIdentifier string         `json:"productIdentifier"`
		SportType         string         `json:"sportType,omitempty"`
		Allowance         string         `json:"allowance"`
		Weight            []weightDoc    `json:"weight,omitempty"`
		Dimensions        []dimensionDoc `json:"dimensions,omitempty"`
		// Prices are a paid option's: ONLINE and AIRPORT in money, MILES in miles.
		Prices []bagPriceDoc `json:"prices,omitempty"`
	}
	weightDoc struct {
		Maximum string `json:"maximum"`
		Unit    string `json:"unit"`
	}
	dimensionDoc struct {
		Length string `json:"length"`
		Width  string `json:"width"`
		Height string `json:"height"`
		Unit   string `json:"unit"`
	}
	bagPriceDoc struct {
		PaymentChannel string `json:"paymentChannel"`
		Amount         string `json:"amount"`
		Currency       string `json:"currency"`
	}
	// includedBagsDoc is an offer's included baggage for one passenger type.
	includedBagsDoc struct {
		PassengerType string          `json:"passengerType"`
		Products      []bagProductDoc `json:"products"`
	}
)

// baggageOperations are the baggage API's six operations as the spec names them (§4.4, in its
// order), each also a path of its own with its type fixed, so that the catalogue, Try it and the
// OpenAPI document (operationId and summary) find them by those names. The original's one path
// with a type parameter answers them all as before.
var baggageOperations = []baggageOperation{
	{"GET /opendata/baggages/v1/all-allowances-without-loyalty", "getAllAllowancesWithoutLoyalty", "All Allowances without Loyalty", flightgraph.BaggageAll},
	{"GET /opendata/baggages/v1/base-allowances", "getBaseAllowances", "Base Allowances", flightgraph.BaggageBase},
	{"GET /opendata/baggages/v1/loyalty-allowances", "getLoyaltyAllowances", "Loyalty Allowances", flightgraph.BaggageLoyalty},
	{"GET /opendata/baggages/v1/paid-options-with-loyalty", "getPaidOptionsWithLoyalty", "Paid Options with Loyalty", flightgraph.BaggagePaidLoyalty},
	{"GET /opendata/baggages/v1/paid-options-without-loyalty", "getPaidOptionsWithoutLoyalty", "Paid Options without Loyalty", flightgraph.BaggagePaid},
	{"GET /opendata/baggages/v1/all-allowances-with-loyalty", "getAllAllowancesWithLoyalty", "All Allowances with Loyalty", flightgraph.BaggageAllLoyalty},
}

// baggageOperation is one of the baggage API's six operations: its route's pattern, its name in
// the OpenAPI document (operationId) and in the spec (summary), and the type it asks for.
type baggageOperation struct {
	Pattern, OperationID, Summary string
	Type                          flightgraph.BaggageType
}

// titleOf is the spec's name of the route of pattern, where it has one the path does not say.
func titleOf(pattern string) string {
	if i := slices.IndexFunc(baggageOperations, func(o baggageOperation) bool { return o.Pattern == pattern }); i >= 0 {
		return baggageOperations[i].Summary
	}
	return ""
}

// baggageOf answers one of baggageOperations: GET /opendata/baggages/allowances with its type.
func (a *API) baggageOf(t flightgraph.BaggageType) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { a.baggage(w, r, t) }
}

// baggageAllowances answers GET /opendata/baggages/allowances?origin&destination&host&type&
// travelClass&fareFamily&passengerType&loyaltyProgram&departureDate.
func (a *API) baggageAllowances(w http.ResponseWriter, r *http.Request) {
	a.baggage(w, r, flightgraph.BaggageType(strings.ToLower(r.URL.Query().Get("type"))))
}

// baggage answers a baggage allowance query of type t, the rest of it in r's query.
func (a *API) baggage(w http.ResponseWriter, r *http.Request, t flightgraph.BaggageType) {
	v := r.URL.Query()
	for _, p := range []string{"origin", "destination", "travelClass"} {
		if v.Get(p) == "" {
			a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, p, "%s is required", p))
			return
		}
	}
	q := flightgraph.BaggageQuery{Origin: v.Get("origin"), Destination: v.Get("destination"), Host: v.Get("host"),
		Type: t, TravelClass: flightgraph.CabinClass(v.Get("travelClass")),
		FareFamily: v.Get("fareFamily"), LoyaltyProgram: v.Get("loyaltyProgram"), DepartureDate: v.Get("departureDate")}
	if t := v.Get("passengerType"); t != "" {
		q.PassengerTypes = strings.Split(t, ",")
	}
	ans, err := a.Travel.BaggageAllowances(r.Context(), q)
	if err != nil {
		a.Error(w, r, err)
		return
	}
	tc := travelClassDoc{TravelClass: string(ans.TravelClass), FareFamily: ans.FareFamily.Code}
	for _, p := range ans.Passengers {
		d := bagPassenger{PaxType: p.PassengerType, TierLevel: p.Tier}
		if p.Tier != "" {
			d.ProgramID = flightgraph.LoyaltyProgramme
		}
		d.Allowances = allowancesDoc{Base: boundBags(p.Base), Loyalty: boundBags(p.Loyalty), Paid: boundBags(p.Paid)}
		tc.Passenger = append(tc.Passenger, d)
	}
	render(w, r, baggageDoc{Host: ans.Host, Itinerary: itineraryRefDoc{ans.Origin, ans.Destination}, TravelClass: []travelClassDoc{tc}, Links: self(r)})
}

// boundBags is one part of an allowance, nil when the type did not ask for it.
func boundBags(segs []*flightgraph.BaggageSegment) *boundBagsDoc {
	if segs == nil {
		return nil
	}
	out := &boundBagsDoc{OutBound: bagSegmentsDoc{Segments: []bagSegmentDoc{}}}
	for _, s := range segs {
		out.OutBound.Segments = append(out.OutBound.Segments, bagSegmentDoc{Origin: s.Origin, Destination: s.Destination, FlightNumber: s.FlightNumber,
			Products: bagProducts(s.Products)})
	}
	return out
}

func bagProducts(ps []*flightgraph.BaggageProduct) []bagProductDoc {
	out := make([]bagProductDoc, 0, len(ps))
	for _, p := range ps {
		d := bagProductDoc{ProductIdentifier: p.Identifier, SportType: p.Sport, Allowance: strconv.Itoa(p.Allowance)}
		if p.MaxKg > 0 {
			d.Weight = []weightDoc{{decimal(p.MaxKg), "kg"}, {decimal(p.MaxLb()), "lbs"}}
		}
		if p.MaxCm != [3]int{} {
			in := p.MaxIn()
			d.Dimensions = []dimensionDoc{{strconv.Itoa(in[0]), strconv.Itoa(in[1]), strconv.Itoa(in[2]), "in"},
				{strconv.Itoa(p.MaxCm[0]), strconv.Itoa(p.MaxCm[1]), strconv.Itoa(p.MaxCm[2]), "cm"}}
		}
		if p.Online != nil {
			d.Prices = []bagPriceDoc{{"ONLINE", p.Online.Decimal(), p.Online.Currency}, {"AIRPORT", p.Airport.Decimal(), p.Airport.Currency},
				{"MILES", strconv.Itoa(p.Miles), "MILES"}}
		}
		out = append(out, d)
	}
	return out
}

// decimal writes a weight without trailing zeros: 18, 39.5.
func decimal(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// baggageOperationsDoc adds to the OpenAPI document the operations of baggageOperations, each a
// copy of the original path's operation (its parameters, examples and answers) without its type
// parameter, under the spec's name: operationId and summary.
func baggageOperationsDoc(doc yaml.MapSlice) error {
	paths, _ := member(doc, "paths").(yaml.MapSlice)
	i := slices.IndexFunc(paths, func(it yaml.MapItem) bool { return it.Key == "/opendata/baggages/allowances" })
	if i < 0 {
		return fmt.Errorf("no path /opendata/baggages/allowances to name the baggage operations after")
	}
	base, ok := member(paths[i].Value, "get").(yaml.MapSlice)
	if !ok {
		return fmt.Errorf("no operation GET /opendata/baggages/allowances")
	}
	var items yaml.MapSlice
	for _, o := range baggageOperations {
		_, path, _ := strings.Cut(o.Pattern, " ")
		op := deepCopy(base).(yaml.MapSlice)
		set(op, "operationId", o.OperationID)
		set(op, "summary", o.Summary)
		set(op, "description", fmt.Sprintf("%s (type %s of GET /opendata/baggages/allowances, which answers it too). %v", o.Summary, o.Type, member(base, "description")))
		params, _ := member(op, "parameters").([]any)
		set(op, "parameters", slices.DeleteFunc(params, func(p any) bool { return member(p, "name") == "type" }))
		items = append(items, yaml.MapItem{Key: path, Value: yaml.MapSlice{{Key: "get", Value: op}}})
	}
	set(doc, "paths", slices.Insert(paths, i+1, items...))
	return nil
}

// deepCopy copies the mappings and lists of a YAML value, so that a copy's changes (weigh
// appends to answers) never reach the original.
func deepCopy(v any) any {
	switch v := v.(type) {
	case yaml.MapSlice:
		out := make(yaml.MapSlice, len(v))
		for i, it := range v {
			out[i] = yaml.MapItem{Key: it.Key, Value: deepCopy(it.Value)}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
