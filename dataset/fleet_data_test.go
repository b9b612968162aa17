package dataset

import (
	"regexp"
	"strings"
	"testing"
)

var (
	validClasses    = map[string]bool{"ECONOMY": true, "PREMIUM": true, "BUSINESS": true, "FIRST": true}
	validCategories = map[string]bool{"seat": true, "meal": true, "entertainment": true, "connectivity": true, "comfort": true}
	validHauls      = map[string]bool{"SH": true, "MH": true, "LH": true}
	featurePattern  = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
)

// seatRange is the sane total seat count of a configuration of a known type; unknown types fall
// back to the range of their haul.
var seatRange = map[string][2]int{
	"E90": {80, 120}, "E95": {100, 136}, "295": {110, 146}, "223": {120, 160},
	"319": {110, 160}, "320": {140, 190}, "32N": {150, 195}, "321": {170, 240},
	"73W": {120, 149}, "73H": {160, 189},
	"332": {200, 300}, "333": {240, 340}, "359": {270, 350}, "772": {260, 400},
	"77W": {300, 430}, "789": {240, 320}, "781": {280, 360},
}

var haulSeatRange = map[string][2]int{"SH": {50, 200}, "MH": {120, 240}, "LH": {200, 450}}

func typesByCode(t *testing.T) map[string]aircraftTypeRow {
	t.Helper()
	m := map[string]aircraftTypeRow{}
	for _, a := range aircraftTypes {
		m[a.Code] = a
	}
	return m
}

func productsByCode() map[string]productRow {
	m := map[string]productRow{}
	for _, p := range products {
		m[p.Code] = p
	}
	return m
}

func TestCarriers(t *testing.T) {
	want := map[string]string{"XX": "AMS", "YY": "CDG"}
	if len(carriers) != len(want) {
		t.Fatalf("got %d carriers, want %d", len(carriers), len(want))
	}
	names := map[string]bool{}
	for _, c := range carriers {
		hub, ok := want[c.Code]
		if !ok {
			t.Errorf("unexpected carrier %q", c.Code)
			continue
		}
		if c.Hub != hub {
			t.Errorf("carrier %s: hub %q, want %q", c.Code, c.Hub, hub)
		}
		delete(want, c.Code)
		if strings.TrimSpace(c.Name) == "" || names[c.Name] {
			t.Errorf("carrier %s: empty or duplicate name %q", c.Code, c.Name)
		}
		names[c.Name] = true
	}
	for code := range want {
		t.Errorf("carrier %s missing", code)
	}
}

func TestAircraftTypes(t *testing.T) {
	if len(aircraftTypes) < 10 {
		t.Errorf("got %d aircraft types, want at least 10", len(aircraftTypes))
	}
	codes, icaos := map[string]bool{}, map[string]bool{}
	for _, a := range aircraftTypes {
		if len(a.Code) != 3 || strings.ToUpper(a.Code) != a.Code {
			t.Errorf("type %q: code must be three upper-case characters", a.Code)
		}
		if len(a.ICAO) != 4 || strings.ToUpper(a.ICAO) != a.ICAO {
			t.Errorf("type %s: ICAO %q must be four upper-case characters", a.Code, a.ICAO)
		}
		if codes[a.Code] {
			t.Errorf("type %s: duplicate code", a.Code)
		}
		if icaos[a.ICAO] {
			t.Errorf("type %s: duplicate ICAO %s", a.Code, a.ICAO)
		}
		codes[a.Code], icaos[a.ICAO] = true, true
		if a.Name == "" || strings.ToUpper(a.Name) != a.Name {
			t.Errorf("type %s: name %q must be upper case", a.Code, a.Name)
		}
		if !validHauls[a.Haul] {
			t.Errorf("type %s: invalid haul %q", a.Code, a.Haul)
		}
		if a.SpeedKmh < 550 || a.SpeedKmh > 950 {
			t.Errorf("type %s: implausible block speed %d km/h", a.Code, a.SpeedKmh)
		}
		minRange, maxRange := 2000, 7000
		if a.Haul == "LH" {
			minRange, maxRange = 9000, 16000
		}
		if a.RangeKm < minRange || a.RangeKm > maxRange {
			t.Errorf("type %s: range %d km outside %d-%d for haul %s", a.Code, a.RangeKm, minRange, maxRange, a.Haul)
		}
		if a.WifiShare < 0 || a.WifiShare > 100 {
			t.Errorf("type %s: wifi share %d outside 0-100", a.Code, a.WifiShare)
		}
	}
}

// TestWifiShare checks that WifiShare is the percentage of the type's configurations with wifi.
func TestWifiShare(t *testing.T) {
	total, wifi := map[string]int{}, map[string]int{}
	for _, c := range configurations {
		total[c.Type]++
		if c.Wifi {
			wifi[c.Type]++
		}
	}
	for _, a := range aircraftTypes {
		if total[a.Code] == 0 {
			continue
		}
		want := (100*wifi[a.Code] + total[a.Code]/2) / total[a.Code]
		if a.WifiShare != want {
			t.Errorf("type %s: WifiShare %d, but %d of %d configurations have wifi (%d%%)", a.Code, a.WifiShare, wifi[a.Code], total[a.Code], want)
		}
	}
}

func TestConfigurations(t *testing.T) {
	if len(configurations) < 16 {
		t.Errorf("got %d configurations, want at least 16", len(configurations))
	}
	types := typesByCode(t)
	prods := productsByCode()
	carrierCodes := map[string]bool{}
	for _, c := range carriers {
		carrierCodes[c.Code] = true
	}
	codes := map[string]bool{}
	hauls := map[string]map[string]int{} // carrier -> haul -> configurations
	first := map[string]bool{}           // carrier has a First cabin
	for _, c := range configurations {
		if len(c.Code) != 3 || strings.ToUpper(c.Code) != c.Code {
			t.Errorf("configuration %q: code must be three upper-case characters", c.Code)
		}
		if codes[c.Code] {
			t.Errorf("configuration %s: duplicate code", c.Code)
		}
		codes[c.Code] = true
		if strings.TrimSpace(c.Name) == "" {
			t.Errorf("configuration %s: empty name", c.Code)
		}
		if !carrierCodes[c.Carrier] {
			t.Errorf("configuration %s: unknown carrier %q", c.Code, c.Carrier)
		}
		typ, ok := types[c.Type]
		if !ok {
			t.Errorf("configuration %s: unknown type %q", c.Code, c.Type)
			continue
		}
		if hauls[c.Carrier] == nil {
			hauls[c.Carrier] = map[string]int{}
		}
		hauls[c.Carrier][typ.Haul]++
		if len(c.Cabins) == 0 {
			t.Errorf("configuration %s: no cabins", c.Code)
		}
		classes := map[string]bool{}
		total := 0
		for _, cab := range c.Cabins {
			if !validClasses[cab.Class] {
				t.Errorf("configuration %s: invalid class %q", c.Code, cab.Class)
			}
			if classes[cab.Class] {
				t.Errorf("configuration %s: class %s appears twice", c.Code, cab.Class)
			}
			classes[cab.Class] = true
			if cab.Seats <= 0 {
				t.Errorf("configuration %s %s: %d seats", c.Code, cab.Class, cab.Seats)
			}
			total += cab.Seats
			p, ok := prods[cab.Product]
			if !ok {
				t.Errorf("configuration %s %s: unknown product %q", c.Code, cab.Class, cab.Product)
			} else if p.Class != cab.Class {
				t.Errorf("configuration %s %s: product %s is of class %s", c.Code, cab.Class, p.Code, p.Class)
			}
		}
		r, ok := seatRange[c.Type]
		if !ok {
			r = haulSeatRange[typ.Haul]
		}
		if total < r[0] || total > r[1] {
			t.Errorf("configuration %s (%s): %d seats outside %d-%d", c.Code, c.Type, total, r[0], r[1])
		}
		if !classes["ECONOMY"] {
			t.Errorf("configuration %s: no ECONOMY cabin", c.Code)
		}
		if typ.Haul == "LH" && !classes["BUSINESS"] {
			t.Errorf("long-haul configuration %s: no BUSINESS cabin", c.Code)
		}
		if typ.Haul != "LH" && (classes["FIRST"] || classes["PREMIUM"]) {
			t.Errorf("%s configuration %s: FIRST and PREMIUM are long-haul cabins", typ.Haul, c.Code)
		}
		if classes["FIRST"] {
			first[c.Carrier] = true
		}
	}
	for _, carrier := range carriers {
		h := hauls[carrier.Code]
		if h["SH"] < 3 || h["MH"] < 1 || h["LH"] < 3 {
			t.Errorf("carrier %s: %d SH, %d MH, %d LH configurations, want at least 3, 1 and 3", carrier.Code, h["SH"], h["MH"], h["LH"])
		}
		if !first[carrier.Code] {
			t.Errorf("carrier %s: no configuration with a FIRST cabin", carrier.Code)
		}
	}
}

func TestProducts(t *testing.T) {
	types := typesByCode(t)
	used := map[string]bool{}
	longHaul := map[string]bool{} // product installed on a long-haul configuration
	noWifi := map[string]string{} // product -> a configuration without wifi that installs it
	classesSeen := map[string]bool{}
	for _, c := range configurations {
		for _, cab := range c.Cabins {
			used[cab.Product] = true
			classesSeen[cab.Class] = true
			if types[c.Type].Haul == "LH" {
				longHaul[cab.Product] = true
			}
			if !c.Wifi {
				noWifi[cab.Product] = c.Code
			}
		}
	}
	for class := range validClasses {
		if !classesSeen[class] {
			t.Errorf("no configuration has a %s cabin", class)
		}
	}

	codes := map[string]bool{}
	descriptions := map[string]string{}
	categoriesSeen := map[string]bool{}
	for _, p := range products {
		if p.Code == "" || strings.ToUpper(p.Code) != p.Code {
			t.Errorf("product %q: code must be upper case", p.Code)
		}
		if codes[p.Code] {
			t.Errorf("product %s: duplicate code", p.Code)
		}
		codes[p.Code] = true
		if !validClasses[p.Class] {
			t.Errorf("product %s: invalid class %q", p.Code, p.Class)
		}
		if !used[p.Code] {
			t.Errorf("product %s: used by no cabin", p.Code)
		}
		if n := len(p.Amenities); n < 4 || n > 9 {
			t.Errorf("product %s: %d amenities, want 4-9", p.Code, n)
		}
		cats := map[string]bool{}
		for _, a := range p.Amenities {
			if !validCategories[a.Category] {
				t.Errorf("product %s: invalid category %q", p.Code, a.Category)
			}
			cats[a.Category] = true
			categoriesSeen[a.Category] = true
			if !featurePattern.MatchString(a.Feature) {
				t.Errorf("product %s: invalid feature code %q", p.Code, a.Feature)
			}
			if strings.TrimSpace(a.Name) == "" {
				t.Errorf("product %s %s: empty name", p.Code, a.Feature)
			}
			if len(strings.TrimSpace(a.Description)) < 40 {
				t.Errorf("product %s %s: description %q too short", p.Code, a.Feature, a.Description)
			}
			if other, dup := descriptions[a.Description]; dup {
				t.Errorf("product %s %s: description duplicates %s", p.Code, a.Feature, other)
			}
			descriptions[a.Description] = p.Code + " " + a.Feature
			if a.Weight <= 0 {
				t.Errorf("product %s %s: weight %d, want > 0", p.Code, a.Feature, a.Weight)
			}
			if cfg, ok := noWifi[p.Code]; ok && mentionsWifi(a) {
				t.Errorf("product %s %s mentions wifi but is installed on %s, which has none", p.Code, a.Feature, cfg)
			}
		}
		need := []string{"seat", "meal", "comfort"}
		if longHaul[p.Code] {
			need = []string{"seat", "meal", "entertainment", "connectivity", "comfort"}
		}
		for _, cat := range need {
			if !cats[cat] {
				t.Errorf("product %s: no %s amenity", p.Code, cat)
			}
		}
	}
	for cat := range validCategories {
		if !categoriesSeen[cat] {
			t.Errorf("no amenity of category %s", cat)
		}
	}
}

func mentionsWifi(a amenityRow) bool {
	if a.Feature == "WIFI" {
		return true
	}
	text := strings.ToLower(a.Name + " " + a.Description)
	for _, w := range []string{"wifi", "wi-fi", "internet", "browsing"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// TestAirframes: every registration names one airframe of one configuration.
func TestAirframes(t *testing.T) {
	n := 0
	for _, c := range configurations {
		for i := range AirframesPerConfiguration {
			r := registration(c.Carrier, c.Code, i)
			if got := Airframes([]string{r})[0]; got != c.Code {
				t.Errorf("%s (%s #%d) resolves to %q", r, c.Code, i, got)
			}
			n++
		}
	}
	if len(airframes) != n {
		t.Errorf("%d registrations for %d airframes", len(airframes), n)
	}
}
