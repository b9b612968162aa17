package flightgraph

import (
	"strings"
	"time"
)

// Inspiration bounds: an answer lists DefaultDestinations destinations unless asked for fewer or
// more, at most MaxDestinations (the demo network has fewer cities); a month is this one or one of
// the next InspirationMonths-1, as far as a lowest-fare calendar reaches (MaxCalendarDays).
const (
	DefaultDestinations = 50
	MaxDestinations     = MaxPageSize
	InspirationMonths   = 12
)

// MonthLayout is the layout of an inspiration's month: "2026-12".
const MonthLayout = "2006-01"

// InspirationQuery asks where an origin's flights go in a month, in a cabin, for how much at the
// least, and optionally under a price or to one destination only.
type InspirationQuery struct {
	// Origin is an airport or city code. Required, and required by MaxPrice (ECodeInconsistentInput).
	Origin string
	// MaxPrice is the most one adult may pay, a decimal in Currency's major unit ("150",
	// "99.90"); "" for no limit.
	MaxPrice string
	// Currency overrides the point of sale's currency; "" keeps it (euros when it has none).
	Currency string
	// Month is YYYY-MM; "" is the month after today's.
	Month string
	// Cabin is the cabin priced; "" is Economy.
	Cabin CabinClass
	// Destination, an airport or city code, keeps that destination only; "" keeps them all.
	Destination string
	// Limit is how many destinations to return, cheapest first: 1 to MaxDestinations. The edges
	// give DefaultDestinations when the caller gives none; 0 is refused, not taken for the
	// default, so that the operation cost a GraphQL limit declares is never below the answer's.
	Limit int
}

// Validate checks the query's shape against today (UTC) before anything is looked up, and
// normalises it: a price without an origin is ECodeInconsistentInput; no origin
// ECodeMissingParameter; a malformed code, month or price ECodeBadFormat; a month before today's
// or more than InspirationMonths-1 ahead, a price that is not positive, or a limit outside 1 to
// MaxDestinations ECodeInvalidParameter; an unknown cabin ECodeCabinClassNotFound. Each names its
// parameter. Whether the codes exist is the service's to say (travel.Service.Inspiration).
func (q *InspirationQuery) Validate(today time.Time) error {
	q.Origin, q.Destination, q.MaxPrice = strings.TrimSpace(q.Origin), strings.TrimSpace(q.Destination), strings.TrimSpace(q.MaxPrice)
	if q.Origin == "" {
		if q.MaxPrice != "" {
			return ParamErrorf(ECodeInconsistentInput, "price", "price needs an origin: the lowest prices are from somewhere")
		}
		return ParamErrorf(ECodeMissingParameter, "origin", "origin is required: an airport or city code")
	}
	var err error
	if q.Origin, err = NormalizeIATACode("origin", q.Origin); err != nil {
		return err
	}
	if q.Destination != "" {
		if q.Destination, err = NormalizeIATACode("destination", q.Destination); err != nil {
			return err
		}
	}
	if q.Currency != "" {
		c, err := CurrencyOf("currency", q.Currency)
		if err != nil {
			return err
		}
		q.Currency = c.Code
	}
	if q.MaxPrice != "" {
		// The exact amount needs the currency's digits, which the point of sale may decide
		// (ParsePrice); its shape is checked here, before anything is looked up.
		if len(q.MaxPrice) > 24 || strings.Trim(q.MaxPrice, "0123456789.") != "" || strings.Count(q.MaxPrice, ".") > 1 {
			if strings.HasPrefix(q.MaxPrice, "-") {
				return ParamErrorf(ECodeInvalidParameter, "price", "price is the most one adult may pay: a positive amount")
			}
			return ParamErrorf(ECodeBadFormat, "price", "price is a decimal amount such as 150 or 99.90, got %q", Clip(q.MaxPrice))
		}
	}
	this := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
	if q.Month == "" {
		q.Month = this.AddDate(0, 1, 0).Format(MonthLayout)
	}
	m, err := time.Parse(MonthLayout, q.Month)
	if err != nil || len(q.Month) != len(MonthLayout) {
		return ParamErrorf(ECodeBadFormat, "month", "month is YYYY-MM, e.g. %s, got %q", this.Format(MonthLayout), Clip(q.Month))
	}
	if last := this.AddDate(0, InspirationMonths-1, 0); m.Before(this) || m.After(last) {
		return ParamErrorf(ECodeInvalidParameter, "month", "month is from %s to %s", this.Format(MonthLayout), last.Format(MonthLayout))
	}
	if q.Cabin == "" {
		q.Cabin = CabinEconomy
	}
	if q.Cabin, err = ParseCabinClass("cabin", string(q.Cabin)); err != nil {
		return err
	}
	if q.Limit < 1 || q.Limit > MaxDestinations {
		return ParamErrorf(ECodeInvalidParameter, "limit", "limit is from 1 to %d destinations", MaxDestinations)
	}
	return nil
}

// ParsePrice reads the query's MaxPrice in a currency: ECodeBadFormat for more decimals than it
// has, ECodeInvalidParameter for an amount that is not positive; ok is false without a price.
func (q *InspirationQuery) ParsePrice(cur Currency) (m Money, ok bool, err error) {
	if q.MaxPrice == "" {
		return Money{}, false, nil
	}
	m, err = ParseAmount(q.MaxPrice, cur.Code)
	if err != nil {
		return Money{}, false, ParamErrorf(ECodeBadFormat, "price", "price is an amount in %s with at most %d decimals, got %q", cur.Code, cur.Digits, Clip(q.MaxPrice))
	}
	if m.Minor <= 0 {
		return Money{}, false, ParamErrorf(ECodeInvalidParameter, "price", "price is the most one adult may pay: a positive amount")
	}
	return m, true, nil
}

// Days are the days of the query's month (a validated query's), first to last.
func (q *InspirationQuery) Days() []string { return MonthDays(q.Month) }

// MonthDays are the days of a month (YYYY-MM), first to last; none for a malformed month.
func MonthDays(month string) []string {
	m, err := time.Parse(MonthLayout, month)
	if err != nil {
		return nil
	}
	var days []string
	for d := m; d.Month() == m.Month(); d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format(DateLayout))
	}
	return days
}

// Inspiration is where an origin's flights go in a month: each destination with the cheapest
// offer of the month there, cheapest first.
type Inspiration struct {
	Origin *Place
	// OriginCity is the city of the origin's (first) airport, OriginCountry its country.
	OriginCity    *City
	OriginCountry *Country
	Month         string
	Cabin         CabinClass
	Currency      string
	Destinations  []*Destination
}

// Destination is a place an inspiration reaches, nonstop or with one stop through a hub, and the
// cheapest offer of the month there for one adult: the one a lowest-fare calendar (MONTH) from the
// origin to Place gives for the month.
type Destination struct {
	// Place is the destination as an offers search takes it: a city with its airports, or the
	// airport an inspiration was asked for.
	Place   *Place
	City    *City
	Country *Country
	Offer   *Offer
}

// Code is the destination's code: a city's, or the airport's asked for.
func (d *Destination) Code() string { return d.Place.Code }

// LowestPrice is what one adult pays for the cheapest offer of the month.
func (d *Destination) LowestPrice() Money { return d.Offer.Price.Total }

// DepartureDate is the local date the cheapest offer leaves on.
func (d *Destination) DepartureDate() string { return d.Offer.Segments[0].Flight.ScheduleDate }

// Stops is the number of stops of the cheapest offer: 0 nonstop, 1 through a hub.
func (d *Destination) Stops() int { return len(d.Offer.Segments) - 1 }
