package dataset

import (
	"regexp"
	"testing"
	"time"
	_ "time/tzdata" // so every zone loads even where the system has no zoneinfo
)

var (
	refDataIATARe     = regexp.MustCompile(`^[A-Z]{3}$`)
	refDataCountryRe  = regexp.MustCompile(`^[A-Z]{2}$`)
	refDataAreaRe     = regexp.MustCompile(`^[NEAFMSP]$`)
	refDataCurrencyRe = regexp.MustCompile(`^[A-Z]{3}$`)
)

func TestAirportsDataSize(t *testing.T) {
	if n := len(airports); n < 150 {
		t.Errorf("got %d airports, want at least 150", n)
	}
}

func TestAirportsDataHubs(t *testing.T) {
	if len(airports) < 2 || airports[0].Code != "AMS" || airports[1].Code != "CDG" {
		t.Fatalf("airports must start with the hubs AMS and CDG")
	}
	for _, code := range []string{"AMS", "CDG", "ORY"} {
		found := false
		for _, a := range airports {
			if a.Code == code {
				found = true
			}
		}
		if !found {
			t.Errorf("airport %s missing", code)
		}
	}
}

func TestAirportsDataSorted(t *testing.T) {
	for i := 3; i < len(airports); i++ {
		if airports[i-1].Code >= airports[i].Code {
			t.Errorf("airports not sorted after the hubs: %s before %s", airports[i-1].Code, airports[i].Code)
		}
	}
	for i := 1; i < len(cities); i++ {
		if cities[i-1].Code >= cities[i].Code {
			t.Errorf("cities not sorted: %s before %s", cities[i-1].Code, cities[i].Code)
		}
	}
	for i := 1; i < len(countries); i++ {
		if countries[i-1].Code >= countries[i].Code {
			t.Errorf("countries not sorted: %s before %s", countries[i-1].Code, countries[i].Code)
		}
	}
}

func TestAirportsDataCountries(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range countries {
		if !refDataCountryRe.MatchString(c.Code) {
			t.Errorf("country code %q is not two upper-case letters", c.Code)
		}
		if seen[c.Code] {
			t.Errorf("duplicate country %s", c.Code)
		}
		seen[c.Code] = true
		if c.Name == "" || c.NameEN == "" || c.NameFR == "" || c.NameNL == "" {
			t.Errorf("country %s has an empty label", c.Code)
		}
		if !refDataAreaRe.MatchString(c.AreaCode) {
			t.Errorf("country %s has area code %q", c.Code, c.AreaCode)
		}
		if !refDataCurrencyRe.MatchString(c.Currency) {
			t.Errorf("country %s has refDataCurrencyRe %q", c.Code, c.Currency)
		}
		if c.Euro != (c.Currency == "EUR") {
			t.Errorf("country %s: Euro=%v but refDataCurrencyRe %s", c.Code, c.Euro, c.Currency)
		}
	}
	if nl := refDataCountry("NL"); nl == nil || nl.AreaCode != "N" {
		t.Errorf("NL must be present with area code N")
	}
}

func TestAirportsDataCities(t *testing.T) {
	countrySet := map[string]bool{}
	for _, c := range countries {
		countrySet[c.Code] = true
	}
	used := map[string]bool{}
	seen := map[string]bool{}
	for _, c := range cities {
		if !refDataIATARe.MatchString(c.Code) {
			t.Errorf("city code %q is not three upper-case letters", c.Code)
		}
		if seen[c.Code] {
			t.Errorf("duplicate city %s", c.Code)
		}
		seen[c.Code] = true
		if c.Name == "" || c.NameEN == "" || c.NameFR == "" || c.NameNL == "" {
			t.Errorf("city %s has an empty label", c.Code)
		}
		if !countrySet[c.Country] {
			t.Errorf("city %s refers to unknown country %q", c.Code, c.Country)
		}
		used[c.Country] = true
	}
	for _, c := range countries {
		if !used[c.Code] {
			t.Errorf("country %s has no city", c.Code)
		}
	}
}

func TestAirportsDataAirports(t *testing.T) {
	citySet := map[string]bool{}
	for _, c := range cities {
		citySet[c.Code] = true
	}
	used := map[string]bool{}
	seen := map[string]bool{}
	zones := map[string]bool{}
	for _, a := range airports {
		if !refDataIATARe.MatchString(a.Code) {
			t.Errorf("airport code %q is not three upper-case letters", a.Code)
		}
		if seen[a.Code] {
			t.Errorf("duplicate airport %s", a.Code)
		}
		seen[a.Code] = true
		if a.Name == "" || a.TimeZone == "" {
			t.Errorf("airport %s has an empty name or time zone", a.Code)
		}
		if !citySet[a.City] {
			t.Errorf("airport %s refers to unknown city %q", a.Code, a.City)
		}
		used[a.City] = true
		if a.Latitude < -90 || a.Latitude > 90 {
			t.Errorf("airport %s latitude %v out of range", a.Code, a.Latitude)
		}
		if a.Longitude < -180 || a.Longitude > 180 {
			t.Errorf("airport %s longitude %v out of range", a.Code, a.Longitude)
		}
		if a.Latitude == 0 && a.Longitude == 0 {
			t.Errorf("airport %s has no position", a.Code)
		}
		zones[a.TimeZone] = true
	}
	for _, c := range cities {
		if !used[c.Code] {
			t.Errorf("city %s has no airport", c.Code)
		}
	}
	for z := range zones {
		if _, err := time.LoadLocation(z); err != nil {
			t.Errorf("time zone %q: %v", z, err)
		}
	}
}

// TestAirportsDataSpotChecks pins a few facts that other code relies on.
func TestAirportsDataSpotChecks(t *testing.T) {
	wantCity := map[string]string{
		"AMS": "AMS", "CDG": "PAR", "ORY": "PAR", "LHR": "LON", "JFK": "NYC",
		"EWR": "NYC", "NRT": "TYO", "HND": "TYO", "FCO": "ROM", "MXP": "MIL",
	}
	for code, city := range wantCity {
		a := refDataAirport(code)
		if a == nil {
			t.Errorf("airport %s missing", code)
			continue
		}
		if a.City != city {
			t.Errorf("airport %s: city %s, want %s", code, a.City, city)
		}
	}
	if a := refDataAirport("AMS"); a != nil && a.TimeZone != "Europe/Amsterdam" {
		t.Errorf("AMS time zone %s", a.TimeZone)
	}
	if a := refDataAirport("CDG"); a != nil && a.TimeZone != "Europe/Paris" {
		t.Errorf("CDG time zone %s", a.TimeZone)
	}
	for _, tc := range []struct {
		code               string
		euro, eu, schengen bool
	}{
		{"NL", true, true, true},
		{"FR", true, true, true},
		{"GB", false, false, false},
		{"IE", true, true, false},
		{"CH", false, false, true},
		{"HR", true, true, true},
		{"BG", true, true, true},
		{"RO", false, true, true},
	} {
		c := refDataCountry(tc.code)
		if c == nil {
			t.Errorf("country %s is missing", tc.code)
			continue
		}
		if c.Euro != tc.euro || c.EU != tc.eu || c.Schengen != tc.schengen {
			t.Errorf("country %s: euro/EU/Schengen = %v/%v/%v, want %v/%v/%v",
				tc.code, c.Euro, c.EU, c.Schengen, tc.euro, tc.eu, tc.schengen)
		}
	}
}

func refDataAirport(code string) *airportRow {
	for i := range airports {
		if airports[i].Code == code {
			return &airports[i]
		}
	}
	return nil
}

func refDataCountry(code string) *countryRow {
	for i := range countries {
		if countries[i].Code == code {
			return &countries[i]
		}
	}
	return nil
}
