package flightgraph

import (
	"fmt"
	"strings"
)

// FareFamily is a branded fare of a cabin: what the price buys (bags, changes, refunds, seat
// choice) and how it is priced against the cabin's base fare. The families of a cabin are its
// upsell ladder, cheapest first.
type FareFamily struct {
	Code  string     `json:"code"` // e.g. "ECONOMY_LIGHT"
	Cabin CabinClass `json:"cabin"`
	Name  string     `json:"name"` // e.g. "Economy Light"
	// Rank orders the families of a cabin, 1 the cheapest.
	Rank int `json:"rank"`
	// PerMille is the family's price against the cabin's base fare, in thousandths.
	PerMille int64 `json:"-"`
	// CheckedBags is the number of checked bags included per passenger with a seat.
	CheckedBags int `json:"checkedBags"`
	// Changeable says whether the trip may be changed; ChangeFeeCents is the fee, in euro cents.
	Changeable     bool  `json:"changeable"`
	ChangeFeeCents int64 `json:"-"`
	// Refundable says whether an unused ticket is refunded, less RefundFeeCents.
	Refundable     bool  `json:"refundable"`
	RefundFeeCents int64 `json:"-"`
	SeatChoice     bool  `json:"seatChoice"`
	LoungeAccess   bool  `json:"loungeAccess"`
	// Miles is the share of the flown distance credited to the loyalty account, in percent.
	MilesPercent int `json:"milesPercent"`
}

// FareFamilies are every cabin's families, cheapest first within a cabin.
var FareFamilies = []*FareFamily{
	{Code: "ECONOMY_LIGHT", Cabin: CabinEconomy, Name: "Economy Light", Rank: 1, PerMille: 1000, MilesPercent: 25},
	{Code: "ECONOMY_STANDARD", Cabin: CabinEconomy, Name: "Economy Standard", Rank: 2, PerMille: 1250, CheckedBags: 1,
		Changeable: true, ChangeFeeCents: 7_000, SeatChoice: true, MilesPercent: 50},
	{Code: "ECONOMY_FLEX", Cabin: CabinEconomy, Name: "Economy Flex", Rank: 3, PerMille: 1800, CheckedBags: 1,
		Changeable: true, Refundable: true, RefundFeeCents: 5_000, SeatChoice: true, MilesPercent: 100},
	{Code: "PREMIUM_STANDARD", Cabin: CabinPremium, Name: "Premium Comfort", Rank: 1, PerMille: 1000, CheckedBags: 2,
		Changeable: true, ChangeFeeCents: 5_000, SeatChoice: true, MilesPercent: 110},
	{Code: "PREMIUM_FLEX", Cabin: CabinPremium, Name: "Premium Comfort Flex", Rank: 2, PerMille: 1350, CheckedBags: 2,
		Changeable: true, Refundable: true, SeatChoice: true, MilesPercent: 125},
	{Code: "BUSINESS_STANDARD", Cabin: CabinBusiness, Name: "Business Standard", Rank: 1, PerMille: 1000, CheckedBags: 2,
		Changeable: true, ChangeFeeCents: 10_000, SeatChoice: true, LoungeAccess: true, MilesPercent: 150},
	{Code: "BUSINESS_FLEX", Cabin: CabinBusiness, Name: "Business Flex", Rank: 2, PerMille: 1300, CheckedBags: 2,
		Changeable: true, Refundable: true, SeatChoice: true, LoungeAccess: true, MilesPercent: 175},
	{Code: "FIRST", Cabin: CabinFirst, Name: "La Première", Rank: 1, PerMille: 1000, CheckedBags: 3,
		Changeable: true, Refundable: true, SeatChoice: true, LoungeAccess: true, MilesPercent: 200},
}

// FamiliesOf returns the families of a cabin, cheapest first.
func FamiliesOf(cabin CabinClass) []*FareFamily {
	var out []*FareFamily
	for _, f := range FareFamilies {
		if f.Cabin == cabin {
			out = append(out, f)
		}
	}
	return out
}

// FareFamilyOf returns the family of a code, in any case; ECodeInvalidParameter naming param when
// there is none.
func FareFamilyOf(param, code string) (*FareFamily, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	for _, f := range FareFamilies {
		if f.Code == c {
			return f, nil
		}
	}
	return nil, ParamErrorf(ECodeInvalidParameter, param, "%q is not a fare family", Clip(code))
}

// PassengerType is a type of traveller, as the offers API names them.
type PassengerType struct {
	Code string `json:"code"` // ADT, CHD, INF …
	// Labels name the type in the service's languages.
	Labels `json:"-"`
	// MinAge and MaxAge are the ages, in years on the day of travel, the type is for; MaxAge 0
	// has no upper bound.
	MinAge int `json:"minAge"`
	MaxAge int `json:"maxAge"`
	// PerMille is the share of the adult fare the type pays, in thousandths.
	PerMille int64 `json:"-"`
	// Seat is false for an infant on an adult's lap: no seat, no airport charges, no checked bag
	// of its own beyond a stroller.
	Seat bool `json:"seat"`
	// Accompanied types travel only with an adult (ADT, YTH or YCD) on the booking.
	Accompanied bool `json:"accompanied"`
}

// PassengerTypes are the types the offers API accepts: its one list, which reference data, search
// contexts and searches all read.
var PassengerTypes = []*PassengerType{
	{Code: "ADT", Labels: Labels{"Adult", "Adulte", "Volwassene"}, MinAge: 26, MaxAge: 64, PerMille: 1000, Seat: true},
	{Code: "YTH", Labels: Labels{"Youth", "Jeune", "Jongere"}, MinAge: 12, MaxAge: 25, PerMille: 900, Seat: true},
	{Code: "YCD", Labels: Labels{"Senior", "Senior", "Senior"}, MinAge: 65, PerMille: 900, Seat: true},
	{Code: "C14", Labels: Labels{"Child (12 to 14)", "Enfant (12 à 14 ans)", "Kind (12 tot 14)"}, MinAge: 12, MaxAge: 14, PerMille: 900, Seat: true, Accompanied: true},
	{Code: "CHD", Labels: Labels{"Child", "Enfant", "Kind"}, MinAge: 2, MaxAge: 11, PerMille: 750, Seat: true, Accompanied: true},
	{Code: "INF", Labels: Labels{"Infant", "Bébé", "Baby"}, MinAge: 0, MaxAge: 1, PerMille: 100, Accompanied: true},
}

// MinAdults is the fewest adults (ADT, YTH or YCD) a booking with accompanied types needs.
const MinAdults = 1

// PassengerTypeOf returns the type of a code, in any case; ECodeInvalidParameter naming param when
// there is none.
func PassengerTypeOf(param, code string) (*PassengerType, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	for _, t := range PassengerTypes {
		if t.Code == c {
			return t, nil
		}
	}
	return nil, ParamErrorf(ECodeInvalidParameter, param, "%q is not a passenger type; use ADT, YTH, YCD, C14, CHD or INF", Clip(code))
}

// TicketCondition is one rule of a ticket: whether something may be done with it, and what it
// costs.
type TicketCondition struct {
	Type        string // CHANGE, REFUND, NO_SHOW, SEAT_CHOICE, LOUNGE, MILES, CHECKED_BAGS
	Allowed     bool
	Fee         *Money // nil when free or not allowed
	Description string
}

// Conditions are a family's ticket conditions, fees in cur.
func (f *FareFamily) Conditions(cur Currency) []TicketCondition {
	fee := func(cents int64) *Money {
		if cents == 0 {
			return nil
		}
		m := Euros(cents).In(cur)
		return &m
	}
	change := TicketCondition{Type: "CHANGE", Allowed: f.Changeable, Description: "The trip cannot be changed."}
	if f.Changeable {
		change.Fee, change.Description = fee(f.ChangeFeeCents), "Changes are allowed before departure, plus any difference in fare."
	}
	refund := TicketCondition{Type: "REFUND", Allowed: f.Refundable, Description: "The ticket is not refunded; taxes and charges of unflown flights are."}
	if f.Refundable {
		refund.Fee, refund.Description = fee(f.RefundFeeCents), "The unused ticket is refunded before departure."
	}
	noShow := TicketCondition{Type: "NO_SHOW", Allowed: f.Refundable, Description: "A missed flight forfeits the ticket."}
	if f.Refundable {
		noShow.Description = "A missed flight is refunded as a cancelled one."
	}
	return []TicketCondition{change, refund, noShow,
		{Type: "SEAT_CHOICE", Allowed: f.SeatChoice, Description: map[bool]string{true: "A seat may be chosen at no charge.", false: "A seat is given at check-in, or chosen for a fee."}[f.SeatChoice]},
		{Type: "LOUNGE", Allowed: f.LoungeAccess, Description: map[bool]string{true: "Lounge access at departure.", false: "No lounge access."}[f.LoungeAccess]},
		{Type: "MILES", Allowed: f.MilesPercent > 0, Description: fmt.Sprintf("%d%% of the distance flown is credited in miles.", f.MilesPercent)},
		{Type: "CHECKED_BAGS", Allowed: f.CheckedBags > 0, Description: fmt.Sprintf("%d checked bag(s) included per passenger with a seat.", f.CheckedBags)},
	}
}
