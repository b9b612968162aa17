package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flightgraph/flightgraph"
	"github.com/flightgraph/flightgraph/store/storetest"
)

// baggageView is as much of a baggage answer as the tests read.
type baggageView struct {
	Host        string
	Itinerary   struct{ Origin, Destination string }
	TravelClass []struct {
		TravelClass, FareFamily string
		Passenger               []struct {
			PaxType, ProgramID, TierLevel string
			Allowances                    map[string]struct {
				OutBound struct {
					Segments []struct {
						Origin, Destination, FlightNumber string
						Products                          []bagProductView
					}
				}
			}
		}
	}
}

type bagProductView struct {
	ProductIdentifier, SportType, Allowance string
	Weight                                  []struct{ Maximum, Unit string }
	Dimensions                              []struct{ Length, Width, Height, Unit string }
	Prices                                  []struct{ PaymentChannel, Amount, Currency string }
}

// TestBaggageAllowances: the baggage API on its original path and in GraphQL. The loyalty tier
// of a password-grant token's customer wins over the request's; a client-credentials token asking
// for loyalty allowances without a tier is told what to give; the two edges answer the same; and
// every refusal has its code.
func TestBaggageAllowances(t *testing.T) {
	storetest.ForEachDialect(t, func(t *testing.T, dialect string) {
		s := newServerWith(t, storetest.Seeded(t, dialect, os.Getenv), nil)
		cc := map[string]string{"Authorization": "Bearer " + s.bearerToken(t, "")}
		customer, _ := s.oaPasswordGrant(t, s.oaDemoClient()) // the demo customer is FGMILES GOLD
		pw := map[string]string{"Authorization": "Bearer " + customer}
		ask := func(t *testing.T, headers map[string]string, q url.Values) baggageView {
			t.Helper()
			var v baggageView
			get(t, s, "/opendata/baggages/allowances?"+q.Encode(), headers, &v)
			return v
		}
		query := func(kv ...string) url.Values {
			q := url.Values{"origin": {"AMS"}, "destination": {"CDG"}, "travelClass": {"ECONOMY"}}
			for i := 0; i < len(kv); i += 2 {
				q.Set(kv[i], kv[i+1])
			}
			return q
		}

		t.Run("all without loyalty", func(t *testing.T) {
			v := ask(t, cc, query("passengerType", "ADT,INF"))
			if v.Itinerary.Origin != "AMS" || v.Itinerary.Destination != "CDG" || v.Host == "" || len(v.TravelClass) != 1 {
				t.Fatalf("header section: %+v", v)
			}
			tc := v.TravelClass[0]
			if tc.TravelClass != "ECONOMY" || tc.FareFamily != "ECONOMY_LIGHT" || len(tc.Passenger) != 2 {
				t.Fatalf("travel class: %+v", tc)
			}
			adt := tc.Passenger[0]
			if adt.PaxType != "ADT" || adt.TierLevel != "" || slices.Collect(keys(adt.Allowances)) == nil {
				t.Fatalf("ADT: %+v", adt)
			}
			if _, ok := adt.Allowances["loyaltyAllowance"]; ok {
				t.Error("type all answered loyalty allowances")
			}
			base := adt.Allowances["baseAllowance"].OutBound.Segments
			if len(base) == 0 || base[0].Origin != "AMS" || base[0].FlightNumber == "" {
				t.Fatalf("base segments: %+v", base)
			}
			hand := base[0].Products[0]
			// The original's example: 55 × 25 × 35 cm is 22 × 10 × 14 in; 12 kg is 26 lbs.
			if hand.ProductIdentifier != "hand-baggage" || hand.Allowance != "1" || len(hand.Weight) != 2 || hand.Weight[0].Maximum != "12" ||
				hand.Weight[1].Maximum != "26" || hand.Weight[1].Unit != "lbs" || len(hand.Dimensions) != 2 ||
				hand.Dimensions[0].Length != "22" || hand.Dimensions[0].Width != "10" || hand.Dimensions[0].Height != "14" || hand.Dimensions[1].Length != "55" {
				t.Errorf("hand baggage: %+v", hand)
			}
			paid := adt.Allowances["paidOptions"].OutBound.Segments[0].Products
			if len(paid) != 5 || paid[0].ProductIdentifier != "extra-baggage" || len(paid[0].Prices) != 3 || paid[0].Prices[0].PaymentChannel != "ONLINE" {
				t.Errorf("paid options: %+v", paid)
			}
			if inf := tc.Passenger[1].Allowances["paidOptions"].OutBound.Segments[0].Products; len(inf) != 0 {
				t.Errorf("an infant on a lap is sold %+v", inf)
			}
		})

		t.Run("a customer's tier wins over the request's", func(t *testing.T) {
			for _, c := range []struct {
				headers map[string]string
				program string
				want    string
			}{
				{cc, "FGMILES_SILVER", "SILVER"},
				{pw, "FGMILES_SILVER", "GOLD"},
				{pw, "", "GOLD"},
			} {
				q := query("type", "loyalty")
				if c.program != "" {
					q.Set("loyaltyProgram", c.program)
				}
				v := ask(t, c.headers, q)
				p := v.TravelClass[0].Passenger[0]
				if p.TierLevel != c.want || p.ProgramID != flightgraph.LoyaltyProgramme {
					t.Errorf("%s: answered for %s %s, want %s", c.program, p.ProgramID, p.TierLevel, c.want)
				}
				if _, ok := p.Allowances["baseAllowance"]; ok || len(p.Allowances["loyaltyAllowance"].OutBound.Segments) == 0 {
					t.Errorf("type loyalty: %+v", p.Allowances)
				}
			}
			// A tier makes paid options cheaper: the customer's GOLD beats no tier at all.
			gold := ask(t, pw, query("type", "paid-loyalty")).TravelClass[0].Passenger[0].Allowances["paidOptions"].OutBound.Segments[0].Products[0].Prices[0]
			none := ask(t, cc, query("type", "paid")).TravelClass[0].Passenger[0].Allowances["paidOptions"].OutBound.Segments[0].Products[0].Prices[0]
			if gold.Currency != none.Currency || amount(t, gold.Amount) >= amount(t, none.Amount) {
				t.Errorf("an extra bag costs %s with GOLD, %s without", gold.Amount, none.Amount)
			}
		})

		t.Run("refusals", func(t *testing.T) {
			for _, c := range []struct {
				name    string
				headers map[string]string
				q       url.Values
				status  int
				code    string
			}{
				{"loyalty without a tier", cc, query("type", "loyalty"), 400, flightgraph.ECodeMissingParameter},
				{"all-loyalty without a tier", cc, query("type", "all-loyalty"), 400, flightgraph.ECodeMissingParameter},
				{"another programme", cc, query("type", "loyalty", "loyaltyProgram", "OTHER_GOLD"), 400, flightgraph.ECodeInvalidParameter},
				{"no such type", cc, query("type", "everything"), 400, flightgraph.ECodeInvalidParameter},
				{"no travel class", cc, url.Values{"origin": {"AMS"}, "destination": {"CDG"}}, 400, flightgraph.ECodeMissingParameter},
				{"no such class", cc, query("travelClass", "STEERAGE"), 404, flightgraph.ECodeCabinClassNotFound},
				{"a family of another class", cc, query("fareFamily", "FIRST"), 400, flightgraph.ECodeInvalidParameter},
				{"no such passenger type", cc, query("passengerType", "ADT,DOG"), 400, flightgraph.ECodeInvalidParameter},
				{"a passenger type twice", cc, query("passengerType", "ADT,CHD,ADT"), 400, flightgraph.ECodeInvalidParameter},
				{"unknown airport", cc, query("origin", "QQQ"), 404, flightgraph.ECodeIATANotFound},
				{"no such carrier", cc, query("host", "QQ"), 400, flightgraph.ECodeInvalidParameter},
				{"no token", nil, query(), 401, flightgraph.ECodeMissingCredentials},
			} {
				code, _, body := s.call(t, http.MethodGet, "/opendata/baggages/allowances?"+c.q.Encode(), c.headers, "")
				if code != c.status || restCode(t, body) != c.code {
					t.Errorf("%s: %d %s, want %d %s", c.name, code, body, c.status, c.code)
				}
			}
			// What a refusal quotes of the request is clipped: the error is not an echo chamber.
			long := strings.Repeat("x", 4000)
			for _, name := range []string{"type", "passengerType", "host"} {
				code, _, body := s.call(t, http.MethodGet, "/opendata/baggages/allowances?"+query(name, long).Encode(), cc, "")
				if code != 400 || strings.Count(body, "x") > 200 {
					t.Errorf("%s of 4000 bytes: %d, a body of %d bytes", name, code, len(body))
				}
			}
		})

		t.Run("GraphQL answers as REST", func(t *testing.T) {
			rest := ask(t, pw, query("type", "all-loyalty", "travelClass", "BUSINESS", "passengerType", "ADT,CHD"))
			r := s.queryAs(t, pw, `{ baggageAllowances(origin: "AMS", destination: "CDG", travelClass: BUSINESS, type: ALL_LOYALTY, passengerTypes: ["ADT", "CHD"]) {
				host origin destination fareFamily { code }
				passengers { passengerType tier
					base { flightNumber products { identifier allowance maxKg maxLb sizeCm sizeIn } }
					loyalty { flightNumber products { identifier allowance maxKg } }
					paid { flightNumber products { identifier sport allowance maxKg online { amount currency } airport { amount } miles } } } } }`, nil)
			if len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
			var g struct {
				BaggageAllowances struct {
					Host, Origin, Destination string
					FareFamily                struct{ Code string }
					Passengers                []struct {
						PassengerType, Tier string
						Base, Loyalty, Paid []struct {
							FlightNumber string
							Products     []struct {
								Identifier, Sport string
								Allowance, Miles  int
								MaxKg, MaxLb      float64
								SizeCm, SizeIn    []int
								Online, Airport   *struct{ Amount, Currency string }
							}
						}
					}
				}
			}
			if err := json.Unmarshal(r.Data, &g); err != nil {
				t.Fatal(err)
			}
			a, tc := g.BaggageAllowances, rest.TravelClass[0]
			if a.Host != rest.Host || a.Origin != rest.Itinerary.Origin || a.FareFamily.Code != tc.FareFamily || len(a.Passengers) != len(tc.Passenger) {
				t.Fatalf("GraphQL %+v, REST %+v", a, rest)
			}
			for i, p := range a.Passengers {
				rp := tc.Passenger[i]
				if p.PassengerType != rp.PaxType || p.Tier != rp.TierLevel || p.Tier != "GOLD" {
					t.Errorf("passenger %d: %s %s, REST %s %s", i, p.PassengerType, p.Tier, rp.PaxType, rp.TierLevel)
				}
				for part, segs := range map[string]any{"baseAllowance": p.Base, "loyaltyAllowance": p.Loyalty, "paidOptions": p.Paid} {
					rs := rp.Allowances[part].OutBound.Segments
					b, _ := json.Marshal(segs)
					var gs []struct {
						FlightNumber string
						Products     []struct {
							Identifier string
							Allowance  int
							MaxKg      float64
							Online     *struct{ Amount, Currency string }
						}
					}
					json.Unmarshal(b, &gs)
					if len(gs) != len(rs) {
						t.Fatalf("%s: %d segments, REST %d", part, len(gs), len(rs))
					}
					for j := range gs {
						if gs[j].FlightNumber != rs[j].FlightNumber || len(gs[j].Products) != len(rs[j].Products) {
							t.Fatalf("%s segment %d: %+v, REST %+v", part, j, gs[j], rs[j])
						}
						for k, gp := range gs[j].Products {
							rp := rs[j].Products[k]
							if gp.Identifier != rp.ProductIdentifier || strconv.Itoa(gp.Allowance) != rp.Allowance ||
								(gp.MaxKg > 0) != (len(rp.Weight) > 0) || (gp.Online != nil) != (len(rp.Prices) > 0) ||
								gp.Online != nil && (gp.Online.Amount != rp.Prices[0].Amount || gp.Online.Currency != rp.Prices[0].Currency) {
								t.Errorf("%s %d/%d: GraphQL %+v, REST %+v", part, j, k, gp, rp)
							}
						}
					}
				}
			}
			if gqlCode(t, jsonOf(s.queryAs(t, cc, `{ baggageAllowances(origin: "AMS", destination: "CDG", travelClass: ECONOMY, type: LOYALTY) { host } }`, nil))) != flightgraph.ECodeMissingParameter {
				t.Error("GraphQL: loyalty without a tier was answered")
			}
		})

		t.Run("offers carry their base allowance", func(t *testing.T) {
			v, _ := searchOffers(t, s, cc, offerSearch("AMS", "PAR", "ADT", "CHD", "INF"))
			seen := 0
			for _, it := range v.Itineraries {
				for _, p := range it.FlightProducts {
					if len(p.IncludedBaggage) != 3 {
						t.Fatalf("offer %s: included baggage %+v", p.FareFamily.Code, p.IncludedBaggage)
					}
					for _, b := range p.IncludedBaggage {
						want := ask(t, cc, query("travelClass", p.CommercialCabin, "fareFamily", p.FareFamily.Code, "type", "base", "passengerType", b.PassengerType)).
							TravelClass[0].Passenger[0].Allowances["baseAllowance"].OutBound.Segments[0].Products
						if jsonOf(b.Products) != jsonOf(want) {
							t.Errorf("%s %s: offer carries %s, the baggage API says %s", p.FareFamily.Code, b.PassengerType, jsonOf(b.Products), jsonOf(want))
						}
					}
					seen++
				}
				if seen > 8 {
					break
				}
			}
			if seen == 0 {
				t.Fatal("no offers")
			}
			// GraphQL's offers carry the same, in its own shape.
			r := s.queryAs(t, cc, `query($s: OfferSearchInput!) { availableOffers(search: $s) { id fareFamily { code }
				includedBaggage { passengerType products { identifier allowance maxKg sizeCm } } } }`, map[string]any{"s": gqlSearch("AMS", "PAR", "ADT", "CHD", "INF")})
			var g struct {
				AvailableOffers []struct {
					ID              string
					FareFamily      struct{ Code string }
					IncludedBaggage []struct {
						PassengerType string
						Products      []struct {
							Identifier string
							Allowance  int
							MaxKg      float64
							SizeCm     []int
						}
					}
				}
			}
			if err := json.Unmarshal(r.Data, &g); err != nil || len(r.Errors) > 0 || len(g.AvailableOffers) == 0 {
				t.Fatalf("GraphQL offers: %v %+v", err, r.Errors)
			}
			rest := map[string]productView{}
			for _, it := range v.Itineraries {
				for _, p := range it.FlightProducts {
					rest[p.ID] = p
				}
			}
			for i, o := range g.AvailableOffers {
				ro, ok := rest[o.ID]
				if !ok || len(o.IncludedBaggage) != len(ro.IncludedBaggage) {
					t.Fatalf("offer %d: GraphQL %+v, REST %+v", i, o, ro)
				}
				for j, b := range o.IncludedBaggage {
					rb := ro.IncludedBaggage[j]
					for k, p := range b.Products {
						rp := rb.Products[k]
						if b.PassengerType != rb.PassengerType || p.Identifier != rp.ProductIdentifier || strconv.Itoa(p.Allowance) != rp.Allowance ||
							(p.SizeCm == nil) != (rp.Dimensions == nil) || p.SizeCm != nil && strconv.Itoa(p.SizeCm[0]) != rp.Dimensions[1].Length {
							t.Errorf("offer %d %s: GraphQL %+v, REST %+v", i, b.PassengerType, p, rp)
						}
					}
				}
			}
		})
	})
}

func keys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// amount reads a decimal amount exactly, in thousandths.
func amount(t *testing.T, s string) int64 {
	t.Helper()
	m, err := flightgraph.ParseAmount(s, "BHD")
	if err != nil {
		t.Fatal(err)
	}
	return m.Minor
}
