package store_test

import (
	"context"
	"os"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// TestAirportSearchIsLiteral: the search text of FindAirports is matched literally. LIKE's
// wildcards (% and _) and its escape character in the text match only themselves, so a search
// for "%" finds the one airport whose name has a percent sign instead of every airport.
func TestAirportSearchIsLiteral(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		db := storetest.Seeded(t, dialect, os.Getenv)
		ctx := context.Background()
		// One airport whose name holds each special character; no seeded name holds any of them.
		if _, err := storetest.SQL(t, db).ExecContext(ctx, `INSERT INTO airports (code, name, city_code, country_code, latitude, longitude, time_zone, hub)
			SELECT 'QQQ', 'Strip 100% Field_B\Annex', city_code, country_code, latitude, longitude, time_zone, FALSE FROM airports WHERE code = 'AMS'`); err != nil {
			t.Fatal(err)
		}
		places := store.NewPlaceStore(db)
		for _, c := range []struct {
			search string
			want   []string
		}{
			{"%", []string{"QQQ"}},
			{"_", []string{"QQQ"}},
			{`\`, []string{"QQQ"}},
			{"100%", []string{"QQQ"}},
			{"d_b", []string{"QQQ"}},
			{`b\a`, []string{"QQQ"}},
			{"%%", nil},
			{"__", nil},
			{"s_r", nil}, // "str" in "Strip", were _ a wildcard
			{"sc%l", nil},
			{"schiphol", []string{"AMS"}}, // an ordinary search still matches, case-insensitively
		} {
			got, total, err := places.FindAirports(ctx, flightgraph.AirportFilter{Search: c.search, Page: flightgraph.Page{Limit: flightgraph.MaxPageSize}})
			if err != nil {
				t.Fatalf("search %q: %v", c.search, err)
			}
			var codes []string
			for _, a := range got {
				codes = append(codes, a.Code)
			}
			if total != len(c.want) || len(codes) != len(c.want) || (len(c.want) > 0 && codes[0] != c.want[0]) {
				t.Errorf("search %q: %v (total %d), want %v", c.search, codes[:min(len(codes), 5)], total, c.want)
			}
		}
	})
}
