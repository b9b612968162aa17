package rest

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http/httptest"
	"testing"
)

// FuzzEncoding: writeJSON writes what encoding/json's Encoder without HTML escaping writes, for
// any text in a document's strings and any number in its floats (the server's TestMain holds it
// so on every answer the tests make; this reaches the text and numbers they do not).
func FuzzEncoding(f *testing.F) {
	for _, s := range []string{"", "Zuiderzee Airways", `<a href="x">&amp;</a>`, "\u2028\u2029\x00\x1f\x7f", "\xff\xfe invalid", "Zürich – Genève 東京", `\"\\/`} {
		f.Add(s, 52.308601, -4.5)
	}
	f.Add("x", 1e21, 1e-7)
	f.Add("y", math.MaxFloat64, -0.0)
	f.Fuzz(func(t *testing.T, s string, lat, lon float64) {
		if math.IsNaN(lat) || math.IsInf(lat, 0) || math.IsNaN(lon) || math.IsInf(lon, 0) {
			return // neither encodes them: a document never holds one
		}
		ap := airportInfo{Code: s, Name: s, NameLangTranl: s, City: cityInfo{Name: s, Country: countryInfo{Name: s}},
			Location: location{Latitude: lat, Longitude: lon}, Places: places{GateNumber: []string{s}, CheckInZone: []string{}}}
		doc := flightList{OperationalFlights: []*operationalFlight{{ID: s, Route: []string{s, s}, Airline: airline{Name: s},
			CodeShareRelations: []codeShare{{Airline: airline{Code: s}}}, FlightRelations: flightRelations{OnwardFlightData: &relatedFlight{ID: s}},
			FlightLegs: []*flightLeg{{StatusName: s, DepartureInformation: movementInfo{Airport: ap, Times: times{Estimated: &timeValue{Value: s}}},
				Aircraft: &aircraftInfo{TypeName: s}}}}},
			Links: links{Self: link{Href: s}, Next: &link{Href: s}}}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		writeJSON(rec, 200, halJSON, doc)
		if !bytes.Equal(rec.Body.Bytes(), want.Bytes()) {
			t.Fatalf("%q %v %v: wrote\n%s\nwant\n%s", s, lat, lon, rec.Body.Bytes(), want.Bytes())
		}
	})
}
