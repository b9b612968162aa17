package rest

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/flightgraph/flightgraph"
)

// The baggage allowance API (/opendata/baggages/allowances): its six operations are one path,
// told apart by the type parameter, with the original's shared header section (host, itinerary,
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

// baggageAllowances answers GET /opendata/baggages/allowances?origin&destination&host&type&
// travelClass&fareFamily&passengerType&loyaltyProgram&departureDate.
func (a *API) baggageAllowances(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	for _, p := range []string{"origin", "destination", "travelClass"} {
		if v.Get(p) == "" {
			a.Error(w, r, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, p, "%s is required", p))
			return
		}
	}
	q := flightgraph.BaggageQuery{Origin: v.Get("origin"), Destination: v.Get("destination"), Host: v.Get("host"),
		Type: flightgraph.BaggageType(strings.ToLower(v.Get("type"))), TravelClass: flightgraph.CabinClass(v.Get("travelClass")),
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
