package flightgraph

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Country is a country of the network, with the labels the REST layer shows per language.
type Country struct {
	Code     string `db:"code"`      // ISO 3166-1 alpha-2
	Name     string `db:"name"`      // upper-case English, as the original APIs show it
	AreaCode string `db:"area_code"` // one-letter world area
	Currency string `db:"currency"`
	Euro     bool   `db:"euro"`
	EU       bool   `db:"eu"`
	Schengen bool   `db:"schengen"`
	Labels
}

// City is a city or metropolitan area keyed by its IATA code (PAR groups CDG and ORY).
type City struct {
	Code        string `db:"code"`
	Name        string `db:"name"`
	CountryCode string `db:"country_code"`
	Labels
}

// Airport is an airport of the network.
type Airport struct {
	Code        string  `db:"code"`
	Name        string  `db:"name"`
	CityCode    string  `db:"city_code"`
	CountryCode string  `db:"country_code"`
	Latitude    float64 `db:"latitude"`
	Longitude   float64 `db:"longitude"`
	TimeZone    string  `db:"time_zone"`
	Hub         bool    `db:"hub"`
}

// Labels are a place's names in the languages the service speaks.
type Labels struct {
	LabelEN string `db:"label_en"`
	LabelFR string `db:"label_fr"`
	LabelNL string `db:"label_nl"`
}

// Language is a language of labels.
type Language string

const (
	LanguageEN Language = "en"
	LanguageFR Language = "fr"
	LanguageNL Language = "nl"
)

// Spoken reports whether the service keeps labels in l.
func (l Language) Spoken() bool { return l == LanguageEN || l == LanguageFR || l == LanguageNL }

// Localized returns the label in a language, English when none is given. It takes no context so
// that GraphQL resolves it in line rather than in a goroutine of its own.
func (l Labels) Localized(language *Language) string {
	if language == nil {
		return l.LabelEN
	}
	return l.Label(string(*language))
}

// Label returns the label in language lang ("en", "fr", "nl"), falling back to English.
func (l Labels) Label(lang string) string {
	switch lang {
	case "fr":
		return l.LabelFR
	case "nl":
		return l.LabelNL
	}
	return l.LabelEN
}

// IsEntity marks Country as an Apollo Federation entity; gqlgen's federation plugin requires it.
func (Country) IsEntity() {}

// IsEntity marks City as an Apollo Federation entity; gqlgen's federation plugin requires it.
func (City) IsEntity() {}

// IsEntity marks Airport as an Apollo Federation entity; gqlgen's federation plugin requires it.
func (Airport) IsEntity() {}

// AirportFilter selects airports. Empty fields do not filter.
type AirportFilter struct {
	Country string // ISO country code
	City    string // IATA city code
	Search  string // case-insensitive match on code, name or city label
	Page
}

// Validate checks the filter's codes and page; it returns ECodeBadFormat.
func (f *AirportFilter) Validate() error {
	if f.Country != "" && !IsCountryCode(f.Country) {
		return ParamErrorf(ECodeBadFormat, "country", "country must be a two-letter ISO code, got %q", f.Country)
	}
	if f.City != "" && !IsIATACode(f.City) {
		return ParamErrorf(ECodeBadFormat, "city", "city must be a three-letter IATA code, got %q", f.City)
	}
	if utf8.RuneCountInString(f.Search) > MaxSearchLength {
		return ParamErrorf(ECodeInvalidParameter, "search", "search is at most %d characters", MaxSearchLength)
	}
	if strings.IndexFunc(f.Search, unicode.IsControl) >= 0 || !utf8.ValidString(f.Search) {
		return ParamErrorf(ECodeBadFormat, "search", "search must be text without control characters")
	}
	return f.Page.Validate()
}

// MaxSearchLength bounds a search text: no name is longer, and the database need not compare a
// longer one.
const MaxSearchLength = 100

// IsIATACode reports whether s is three upper-case letters.
func IsIATACode(s string) bool { return isUpperAlpha(s, 3) }

// IsCountryCode reports whether s is two upper-case letters.
func IsCountryCode(s string) bool { return isUpperAlpha(s, 2) }

func isUpperAlpha(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

// NormalizeIATACode upper-cases and trims a user-supplied airport or city code and checks its
// format; it returns ECodeBadFormat naming param.
func NormalizeIATACode(param, code string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if !IsIATACode(c) {
		return "", ParamErrorf(ECodeBadFormat, param, "%s must be a three-letter IATA code, got %q", param, Clip(code))
	}
	return c, nil
}

// PlaceStore reads countries, cities and airports. Batch lookups return one entry per key, in the
// order of the keys, with nil for a key that does not exist.
type PlaceStore interface {
	AirportsByCodes(ctx context.Context, codes []string) ([]*Airport, error)
	CitiesByCodes(ctx context.Context, codes []string) ([]*City, error)
	CountriesByCodes(ctx context.Context, codes []string) ([]*Country, error)
	// FindAirports returns one page of airports ordered by code, and the number of all matches.
	FindAirports(ctx context.Context, f AirportFilter) ([]*Airport, int, error)
	// AirportsByCity returns, for each city code, its airports ordered by code.
	AirportsByCities(ctx context.Context, cityCodes []string) ([][]*Airport, error)
	// Airports returns every airport ordered by code.
	Airports(ctx context.Context) ([]*Airport, error)
	// Cities returns every city ordered by code.
	Cities(ctx context.Context) ([]*City, error)
	// Countries returns every country ordered by code.
	Countries(ctx context.Context) ([]*Country, error)
}
