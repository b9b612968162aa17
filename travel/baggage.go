package travel

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/flightgraph/flightgraph"
)

// The baggage rules. A passenger's base allowance follows the travel class and fare family (the
// checked bags offers show come from here: FareFamily.CheckedBags); the loyalty tier adds pieces;
// paid options are priced per segment by haul, in the point of sale's currency, less the tier's
// discount.

// Piece sizes, in centimetres, and weights, in kilograms.
var (
	cabinBagCm   = [3]int{55, 25, 35} // length, width, height, as the original lists them
	accessoryCm  = [3]int{40, 30, 15}
	checkedBagCm = [3]int{80, 50, 28} // 158 cm in all
)

// handBags is the cabin bags of a travel class, and handBagKg their weight each.
func handBags(c flightgraph.CabinClass) (pieces int, kg float64) {
	switch c {
	case flightgraph.CabinBusiness, flightgraph.CabinFirst:
		return 2, 18
	case flightgraph.CabinPremium:
		return 1, 18
	}
	return 1, 12
}

// checkedKg is the weight of each checked bag of a travel class.
func checkedKg(c flightgraph.CabinClass) float64 {
	if c == flightgraph.CabinBusiness || c == flightgraph.CabinFirst {
		return 32
	}
	return 23
}

// tierBags is the checked bags a tier adds, and whether they weigh 32 kg whatever the class.
func tierBags(tier string) (pieces int, heavy bool) {
	switch tier {
	case "SILVER":
		return 1, false
	case "GOLD":
		return 1, true
	case "PLATINUM":
		return 2, true
	}
	return 0, false
}

// tierDiscount is the share of a paid option's price a tier takes off, in thousandths.
func tierDiscount(tier string) int64 {
	switch tier {
	case "SILVER":
		return 100
	case "GOLD":
		return 200
	case "PLATINUM":
		return 300
	}
	return 0
}

// paidOptions are the options sold per segment, with their online price in euro cents by haul;
// at the airport they cost a quarter more, in miles a hundred per euro.
var paidOptions = []struct {
	id, sport string
	kg        float64
	cm        [3]int
	cents     map[string]int64
}{
	{"extra-baggage", "", 23, checkedBagCm, map[string]int64{"SHORT": 3_500, "MEDIUM": 5_500, "LONG": 10_000}},
	{"extra-weight", "", 32, checkedBagCm, map[string]int64{"SHORT": 5_000, "MEDIUM": 7_000, "LONG": 10_000}},
	{"sports-equipment", "dive", 23, [3]int{100, 60, 40}, map[string]int64{"SHORT": 4_000, "MEDIUM": 6_000, "LONG": 9_000}},
	{"sports-equipment", "bicycle", 32, [3]int{180, 100, 30}, map[string]int64{"SHORT": 5_000, "MEDIUM": 7_000, "LONG": 12_000}},
	{"sports-equipment", "golf", 23, [3]int{130, 40, 40}, map[string]int64{"SHORT": 3_000, "MEDIUM": 5_000, "LONG": 7_500}},
}

// BaggageAllowances answers a baggage query for the trip's first itinerary on its date (the
// nonstop flight when there is one). Unknown places are ECodeIATANotFound; no flight between them
// that day ECodeTripDestination; a loyalty type without a tier ECodeMissingParameter.
func (s *Service) BaggageAllowances(ctx context.Context, q flightgraph.BaggageQuery) (*flightgraph.BaggageAnswer, error) {
	if q.Type == "" {
		q.Type = flightgraph.BaggageAll
	}
	if !slices.Contains(flightgraph.BaggageTypes, q.Type) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "type", "type is one of all, base, loyalty, paid, paid-loyalty, all-loyalty, got %q", flightgraph.Clip(string(q.Type)))
	}
	tier, err := s.loyaltyTier(ctx, q.LoyaltyProgram)
	if err != nil {
		return nil, err
	}
	if q.Type.NeedsTier() && tier == "" {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeMissingParameter, "loyaltyProgram",
			"%s allowances need a tier: give loyaltyProgram (e.g. %s_GOLD) or call with a password-grant token of a member", q.Type, flightgraph.LoyaltyProgramme)
	}
	class, err := flightgraph.ParseCabinClass("travelClass", string(q.TravelClass))
	if err != nil {
		return nil, err
	}
	fam := flightgraph.FamiliesOf(class)[0]
	if q.FareFamily != "" {
		if fam, err = flightgraph.FareFamilyOf("fareFamily", q.FareFamily); err != nil {
			return nil, err
		}
		if fam.Cabin != class {
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "fareFamily", "%s is a family of %s, not of %s", fam.Code, fam.Cabin, class)
		}
	}
	if len(q.PassengerTypes) == 0 {
		q.PassengerTypes = []string{"ADT"}
	}
	if len(q.PassengerTypes) > len(flightgraph.BaggagePassengerTypes) {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "passengerType", "give each passenger type once")
	}
	for i, t := range q.PassengerTypes {
		q.PassengerTypes[i] = strings.ToUpper(strings.TrimSpace(t))
		if !slices.Contains(flightgraph.BaggagePassengerTypes, q.PassengerTypes[i]) {
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "passengerType", "passengerType is a list of %s, got %q", strings.Join(flightgraph.BaggagePassengerTypes, ", "), flightgraph.Clip(t))
		}
		if slices.Contains(q.PassengerTypes[:i], q.PassengerTypes[i]) {
			return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "passengerType", "give each passenger type once: %s is there twice", q.PassengerTypes[i])
		}
	}
	now := s.Now().UTC()
	if q.DepartureDate == "" {
		q.DepartureDate = now.AddDate(0, 0, 1).Format(flightgraph.DateLayout)
	}
	search := &flightgraph.OfferSearch{Passengers: []flightgraph.Passenger{{ID: 1, Type: "ADT"}},
		Connections: []flightgraph.RequestedConnection{{Origin: q.Origin, Destination: q.Destination, DepartureDate: q.DepartureDate}}}
	if err := s.resolve(ctx, search); err != nil {
		return nil, err
	}
	host := strings.ToUpper(q.Host)
	if host == "" {
		host = flightgraph.PointOfSaleFromContext(ctx).Brand
	}
	names, err := s.CarrierNames(ctx)
	if err != nil {
		return nil, err
	}
	if host == "" {
		host = slices.Sorted(func(yield func(string) bool) {
			for k := range names {
				if !yield(k) {
					return
				}
			}
		})[0]
	}
	if _, ok := names[host]; !ok {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeInvalidParameter, "host", "%s is not a carrier of the network", flightgraph.Clip(host))
	}
	byDate, err := s.itineraries(ctx, search.Connections[0], []string{q.DepartureDate}, now.Truncate(time.Second).Add(-MinBookingLead))
	if err != nil {
		return nil, err
	}
	its := byDate[q.DepartureDate]
	if len(its) == 0 {
		return nil, flightgraph.ParamErrorf(flightgraph.ECodeTripDestination, "destination", "no flight from %s to %s on %s", q.Origin, q.Destination, q.DepartureDate)
	}
	it := its[0]
	cur, err := s.currency(&flightgraph.OfferSearch{}, flightgraph.PointOfSaleFromContext(ctx))
	if err != nil {
		return nil, err
	}
	out := &flightgraph.BaggageAnswer{Host: host, Origin: it.flights[0].OriginCode, Destination: it.flights[len(it.flights)-1].DestinationCode, TravelClass: class, FareFamily: fam}
	wantBase, wantLoyalty, wantPaid := q.Type.Wants()
	for _, t := range q.PassengerTypes {
		a := &flightgraph.BaggageAllowance{PassengerType: t, Tier: tier}
		for _, f := range it.flights {
			seg := func(products []*flightgraph.BaggageProduct) *flightgraph.BaggageSegment {
				return &flightgraph.BaggageSegment{Origin: f.OriginCode, Destination: f.DestinationCode, FlightNumber: f.Designator(), Products: products}
			}
			if wantBase {
				a.Base = append(a.Base, seg(baseAllowance(class, fam, t)))
			}
			if wantLoyalty {
				a.Loyalty = append(a.Loyalty, seg(loyaltyAllowance(class, t, tier)))
			}
			if wantPaid {
				priced := ""
				if q.Type.NeedsTier() {
					priced = tier
				}
				a.Paid = append(a.Paid, seg(paidAllowance(f.Haul, t, priced, cur)))
			}
		}
		out.Passengers = append(out.Passengers, a)
	}
	return out, nil
}

// loyaltyTier is the tier a baggage query is answered for: Service.Loyalty's answer when it is
// set (the access core's: a password-grant token's customer wins), else the parameter's.
func (s *Service) loyaltyTier(ctx context.Context, loyaltyProgram string) (string, error) {
	if s.Loyalty != nil {
		return s.Loyalty(ctx, loyaltyProgram)
	}
	if loyaltyProgram == "" {
		return "", nil
	}
	return flightgraph.ParseLoyalty(loyaltyProgram)
}

// IncludedBaggage is what each passenger type of an offer may carry without paying: the base
// allowance of the offer's class and family, the same on every segment. Offers and the baggage
// API answer from the same rules.
func IncludedBaggage(o *flightgraph.Offer) []*flightgraph.PassengerBaggage {
	out := make([]*flightgraph.PassengerBaggage, 0, len(o.Price.Passengers))
	for _, p := range o.Price.Passengers {
		out = append(out, &flightgraph.PassengerBaggage{PassengerType: p.Type, Products: baseAllowance(o.Cabin, o.Family, p.Type)})
	}
	return out
}

// onLap reports whether a passenger type travels without a seat.
func onLap(t string) bool { return t == "INF" }

func baseAllowance(class flightgraph.CabinClass, fam *flightgraph.FareFamily, t string) []*flightgraph.BaggageProduct {
	if onLap(t) {
		return []*flightgraph.BaggageProduct{
			{Identifier: "accessory", Allowance: 1, MaxKg: 8, MaxCm: accessoryCm},
			{Identifier: "check-in-baggage", Allowance: 1, MaxKg: 10, MaxCm: checkedBagCm},
			{Identifier: "strollers", Allowance: 1},
		}
	}
	pieces, kg := handBags(class)
	out := []*flightgraph.BaggageProduct{
		{Identifier: "hand-baggage", Allowance: pieces, MaxKg: kg, MaxCm: cabinBagCm},
		{Identifier: "accessory", Allowance: 1, MaxCm: accessoryCm},
	}
	if fam.CheckedBags > 0 {
		out = append(out, &flightgraph.BaggageProduct{Identifier: "check-in-baggage", Allowance: fam.CheckedBags, MaxKg: checkedKg(class), MaxCm: checkedBagCm})
	}
	if t == "CHD" || t == "INF_SEATED" {
		out = append(out, &flightgraph.BaggageProduct{Identifier: "strollers", Allowance: 1})
	}
	return out
}

func loyaltyAllowance(class flightgraph.CabinClass, t, tier string) []*flightgraph.BaggageProduct {
	pieces, heavy := tierBags(tier)
	if pieces == 0 || onLap(t) {
		return []*flightgraph.BaggageProduct{}
	}
	kg := checkedKg(class)
	if heavy {
		kg = 32
	}
	return []*flightgraph.BaggageProduct{{Identifier: "check-in-baggage", Allowance: pieces, MaxKg: kg, MaxCm: checkedBagCm}}
}

func paidAllowance(haul, t, tier string, cur flightgraph.Currency) []*flightgraph.BaggageProduct {
	if onLap(t) {
		return []*flightgraph.BaggageProduct{}
	}
	var out []*flightgraph.BaggageProduct
	for _, o := range paidOptions {
		cents := flightgraph.ScalePerMille(o.cents[haul], 1000-tierDiscount(tier))
		online, airport := flightgraph.Euros(cents).In(cur), flightgraph.Euros(flightgraph.ScalePerMille(cents, 1250)).In(cur)
		out = append(out, &flightgraph.BaggageProduct{Identifier: o.id, Sport: o.sport, Allowance: 1, MaxKg: o.kg, MaxCm: o.cm,
			Online: &online, Airport: &airport, Miles: int(cents)})
	}
	return out
}
