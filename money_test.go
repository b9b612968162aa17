package flightgraph

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestMulDivIsExact: the 128-bit path rounds as math/big does, half to even, on random amounts
// and factors, ties included, falls back to math/big past 128 bits, and panics past int64 rather
// than wrap.
func TestMulDivIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 200_000 {
		n := r.Int64N(1<<40) - 1<<39
		factors := make([]int64, r.IntN(6)+1)
		den := int64(1)
		for i := range factors {
			factors[i] = r.Int64N(20_000)
			den *= 1000
		}
		if r.IntN(4) == 0 {
			den = 2 // ties
		}
		num := big.NewInt(n)
		for _, f := range factors {
			num.Mul(num, big.NewInt(f))
		}
		if q := new(big.Int).Quo(num, big.NewInt(den)); !q.IsInt64() || q.Int64() == math.MaxInt64 || q.Int64() == math.MinInt64 {
			// Past int64: it panics rather than wraps.
			func() {
				defer func() {
					if recover() == nil {
						t.Fatalf("mulDiv(%d, %v, %d) did not refuse an amount past int64", n, factors, den)
					}
				}()
				mulDiv(n, factors, den)
			}()
			continue
		}
		want := roundHalfEven(num, big.NewInt(den))
		if got := mulDiv(n, factors, den); got != want {
			t.Fatalf("mulDiv(%d, %v, %d) = %d, want %d", n, factors, den, got, want)
		}
	}
}

func TestMoney(t *testing.T) {
	for _, c := range []struct {
		cents int64
		cur   string
		want  string
	}{
		{12345, "EUR", "123.45 EUR"},
		{100, "JPY", "165 JPY"},      // 1 EUR at 165
		{12345, "USD", "133.33 USD"}, // 123.45 × 1.08 = 133.326
		{5, "EUR", "0.05 EUR"},
		{250, "BHD", "1.018 BHD"}, // 2.50 × 0.407 = 1.0175: half to even
		{100_000, "IDR", "17500000.00 IDR"},
	} {
		cur, err := CurrencyOf("currency", c.cur)
		if err != nil {
			t.Fatal(err)
		}
		if got := Euros(c.cents).In(cur).String(); got != c.want {
			t.Errorf("%d cents in %s: %s, want %s", c.cents, c.cur, got, c.want)
		}
		m, err := ParseAmount(Euros(c.cents).In(cur).Decimal(), c.cur)
		if err != nil || m != Euros(c.cents).In(cur) {
			t.Errorf("ParseAmount(%q) = %v, %v", Euros(c.cents).In(cur).Decimal(), m, err)
		}
	}
	for _, bad := range []string{"", "1.2.3", "abc", "1.234", "-+1", "1e5"} {
		if _, err := ParseAmount(bad, "EUR"); ErrorCode(err) != ECodeBadFormat {
			t.Errorf("ParseAmount(%q): %v", bad, err)
		}
	}
	if _, err := CurrencyOf("currency", "XXX"); ErrorCode(err) != ECodeInvalidParameter {
		t.Errorf("XXX: %v", err)
	}
}

// TestMoneyArithmeticPanicsPastInt64: a sum or product past int64 is a panic (the request's
// internal error), never a wrapped amount such as a cart of huge quantities priced below zero.
func TestMoneyArithmeticPanicsPastInt64(t *testing.T) {
	eur := func(minor int64) Money { return Money{Minor: minor, Currency: "EUR"} }
	wraps := map[string]func() Money{
		"max + 1":      func() Money { return eur(math.MaxInt64).Add(eur(1)) },
		"min + -1":     func() Money { return eur(math.MinInt64).Add(eur(-1)) },
		"1000 × max/8": func() Money { return eur(1000).Times(math.MaxInt64 / 8) },
		"-2 × max":     func() Money { return eur(-2).Times(math.MaxInt64) },
	}
	for name, f := range wraps {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			t.Errorf("%s = %v", name, f())
		}()
	}
	if got := eur(math.MaxInt64 - 1).Add(eur(1)); got.Minor != math.MaxInt64 {
		t.Errorf("max-1 + 1 = %v", got)
	}
	if got := eur(-3).Times(-4); got.Minor != 12 {
		t.Errorf("-3 × -4 = %v", got)
	}
	if got := eur(math.MaxInt64).Times(-1); got.Minor != -math.MaxInt64 {
		t.Errorf("max × -1 = %v", got)
	}
}
