package flightgraph

import (
	"math"
	"strings"
)

// BaggageType is what a baggage allowance query asks for: the six operations of the baggage API.
type BaggageType string

const (
	BaggageAll         BaggageType = "all"          // all allowances without loyalty: base and paid options
	BaggageBase        BaggageType = "base"         // the fare's base allowance
	BaggageLoyalty     BaggageType = "loyalty"      // what the loyalty tier adds
	BaggagePaid        BaggageType = "paid"         // paid options without loyalty
	BaggagePaidLoyalty BaggageType = "paid-loyalty" // paid options at the tier's prices
	BaggageAllLoyalty  BaggageType = "all-loyalty"  // all allowances with loyalty
)

// BaggageTypes are the query types, in the order of the original's operations.
var BaggageTypes = []BaggageType{BaggageAll, BaggageBase, BaggageLoyalty, BaggagePaid, BaggagePaidLoyalty, BaggageAllLoyalty}

// Wants tells which parts of an allowance the type asks for.
func (t BaggageType) Wants() (base, loyalty, paid bool) {
	switch t {
	case BaggageBase:
		return true, false, false
	case BaggageLoyalty:
		return false, true, false
	case BaggagePaid, BaggagePaidLoyalty:
		return false, false, true
	case BaggageAllLoyalty:
		return true, true, true
	}
	return true, false, true
}

// NeedsTier reports whether the type is priced or granted by a loyalty tier.
func (t BaggageType) NeedsTier() bool {
	return t == BaggageLoyalty || t == BaggagePaidLoyalty || t == BaggageAllLoyalty
}

// LoyaltyProgramme is the network's loyalty programme, and LoyaltyTiers its tiers from the
// entry level up.
const LoyaltyProgramme = "FGMILES"

var LoyaltyTiers = []string{"IVORY", "SILVER", "GOLD", "PLATINUM"}

// ParseLoyalty reads the original's loyaltyProgram parameter, PROGRAMME_TIER (FGMILES_GOLD);
// ECodeInvalidParameter for another programme or tier.
func ParseLoyalty(s string) (tier string, err error) {
	prog, tier, ok := strings.Cut(strings.ToUpper(strings.TrimSpace(s)), "_")
	if !ok || prog != LoyaltyProgramme || !isTier(tier) {
		return "", ParamErrorf(ECodeInvalidParameter, "loyaltyProgram", "loyaltyProgram is %s_ and a tier (%s), got %q", LoyaltyProgramme, strings.Join(LoyaltyTiers, ", "), Clip(s))
	}
	return tier, nil
}

func isTier(t string) bool {
	for _, x := range LoyaltyTiers {
		if x == t {
			return true
		}
	}
	return false
}

// BaggagePassengerTypes are the passenger types of the baggage API: the offers' types and
// INF_SEATED, an infant with a seat of its own.
var BaggagePassengerTypes = []string{"ADT", "YTH", "YCD", "C14", "CHD", "INF", "INF_SEATED"}

// BaggageQuery asks for the baggage allowances of a trip's passengers in one travel class.
type BaggageQuery struct {
	Origin, Destination string
	// Host is the carrier whose rules apply; "" for the point of sale's brand, else the network's
	// first carrier.
	Host        string
	Type        BaggageType
	TravelClass CabinClass
	// FareFamily is the family whose base allowance applies; "" for the class's first.
	FareFamily     string
	PassengerTypes []string
	// LoyaltyProgram is the original's loyaltyProgram parameter (FGMILES_GOLD), "" for none; the
	// tier of the customer behind a password-grant token wins over it.
	LoyaltyProgram string
	// DepartureDate picks the flights whose segments are shown; "" for tomorrow.
	DepartureDate string
}

// BaggageProduct is one kind of baggage with its allowance, or one paid option with its price.
type BaggageProduct struct {
	// Identifier is hand-baggage, accessory, check-in-baggage, strollers, extra-baggage,
	// extra-weight or sports-equipment.
	Identifier string
	// Sport is the sports equipment's kind (dive, bicycle, golf), "" otherwise.
	Sport     string
	Allowance int
	// MaxKg is the weight of each piece, 0 for no limit; MaxCm the length, width and height.
	MaxKg float64
	MaxCm [3]int
	// Prices are a paid option's, by where it is paid: AIRPORT, ONLINE (in money), MILES (in
	// miles, Money with currency "MILES" is not used: see Miles).
	Online, Airport *Money
	Miles           int
}

// BaggageSegment is one flight of the trip with its products.
type BaggageSegment struct {
	Origin, Destination string
	FlightNumber        string
	Products            []*BaggageProduct
}

// BaggageAllowance is what one passenger type may carry on each segment: the base allowance,
// what the tier adds, and the paid options, as the query's type asks.
type BaggageAllowance struct {
	PassengerType string
	Tier          string
	Base          []*BaggageSegment
	Loyalty       []*BaggageSegment
	Paid          []*BaggageSegment
}

// BaggageAnswer is a baggage query's answer.
type BaggageAnswer struct {
	Host                string
	Origin, Destination string
	TravelClass         CabinClass
	FareFamily          *FareFamily
	Passengers          []*BaggageAllowance
}

// PassengerBaggage is what one passenger type of an offer may carry without paying.
type PassengerBaggage struct {
	PassengerType string
	Products      []*BaggageProduct
}

// poundsPerKg is the international avoirdupois pound's inverse (1 lb = 0.45359237 kg).
const poundsPerKg = 1 / 0.45359237

// MaxLb is the piece's weight in pounds, rounded down to half a pound as the original shows it
// (18 kg: 39.5 lb), 0 for no limit.
func (p *BaggageProduct) MaxLb() float64 { return math.Floor(p.MaxKg*poundsPerKg*2) / 2 }

// MaxIn is the piece's dimensions in whole inches (55 × 25 × 35 cm: 22 × 10 × 14 in).
func (p *BaggageProduct) MaxIn() [3]int {
	var in [3]int
	for i, cm := range p.MaxCm {
		in[i] = int(math.Round(float64(cm) / 2.54))
	}
	return in
}

// SizeCm is the piece's length, width and height, nil for no limit.
func (p *BaggageProduct) SizeCm() []int {
	if p.MaxCm == [3]int{} {
		return nil
	}
	return p.MaxCm[:]
}

// SizeIn is SizeCm in whole inches.
func (p *BaggageProduct) SizeIn() []int {
	if p.MaxCm == [3]int{} {
		return nil
	}
	in := p.MaxIn()
	return in[:]
}
