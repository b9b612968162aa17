package flightgraph

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Money is an exact amount: a whole number of a currency's minor units (cents for EUR, yen for
// JPY, fils for BHD). Prices are never floats: they are summed in minor units and converted once,
// with one rounding rule (RoundHalfEven).
type Money struct {
	Minor    int64
	Currency string
}

// Currency is an ISO 4217 currency the network sells in, with its fixed reference rate.
type Currency struct {
	Code string
	// Digits is the number of decimals of its minor unit: 2 for EUR, 0 for JPY, 3 for BHD.
	Digits int
	// PerEuro is how much one euro buys, in millionths: a fixed reference rate, so that a price
	// is the same in every operation and on every replica (prices are filed in euros).
	PerEuro int64
}

// PricingCurrency is the currency fares and charges are filed in.
const PricingCurrency = "EUR"

// currencies are the currencies of the network's countries, with their reference rates. The rates
// are fixed on purpose: a shopping engine quotes from a rate table it controls, not from a feed
// that changes between a search and its price check.
var currencies = map[string]Currency{}

func init() {
	for _, c := range []struct {
		code    string
		digits  int
		perEuro string
	}{
		{"EUR", 2, "1"}, {"USD", 2, "1.08"}, {"GBP", 2, "0.85"}, {"CHF", 2, "0.95"}, {"SEK", 2, "11.4"},
		{"NOK", 2, "11.6"}, {"DKK", 2, "7.46"}, {"PLN", 2, "4.3"}, {"CZK", 2, "25.2"}, {"HUF", 2, "395"},
		{"RON", 2, "4.97"}, {"RSD", 2, "117.2"}, {"ISK", 0, "150"}, {"TRY", 2, "38"}, {"AED", 2, "3.97"},
		{"SAR", 2, "4.05"}, {"QAR", 2, "3.93"}, {"BHD", 3, "0.407"}, {"JOD", 3, "0.766"}, {"ILS", 2, "4"},
		{"EGP", 2, "53"}, {"MAD", 2, "10.7"}, {"DZD", 2, "145"}, {"TND", 3, "3.35"}, {"LBP", 2, "96700"},
		{"XOF", 0, "655.957"}, {"XAF", 0, "655.957"}, {"XPF", 0, "119.332"}, {"XCG", 2, "1.93"}, {"AWG", 2, "1.94"},
		{"SRD", 2, "38"}, {"DOP", 2, "66"}, {"CUP", 2, "25.9"}, {"PAB", 2, "1.08"}, {"CRC", 2, "545"},
		{"COP", 2, "4450"}, {"PEN", 2, "4.05"}, {"CLP", 0, "1020"}, {"ARS", 2, "1250"}, {"BRL", 2, "6.1"},
		{"MXN", 2, "20.5"}, {"CAD", 2, "1.5"}, {"NGN", 2, "1650"}, {"GHS", 2, "15.5"}, {"KES", 2, "140"},
		{"ETB", 2, "135"}, {"RWF", 0, "1520"}, {"CDF", 2, "3050"}, {"MGA", 2, "4900"}, {"MUR", 2, "49.5"},
		{"ZAR", 2, "19.8"}, {"INR", 2, "92"}, {"THB", 2, "37"}, {"VND", 0, "28000"}, {"MYR", 2, "4.8"},
		{"SGD", 2, "1.45"}, {"IDR", 2, "17500"}, {"PHP", 2, "62"}, {"HKD", 2, "8.4"}, {"CNY", 2, "7.8"},
		{"TWD", 2, "34.5"}, {"KRW", 0, "1500"}, {"JPY", 0, "165"}, {"AUD", 2, "1.65"}, {"NZD", 2, "1.8"},
	} {
		micros, err := parseDecimal(c.perEuro, 6)
		if err != nil {
			panic(fmt.Sprintf("currency %s: %v", c.code, err))
		}
		currencies[c.code] = Currency{Code: c.code, Digits: c.digits, PerEuro: micros}
	}
}

// CurrencyOf returns a currency the network prices in; ECodeInvalidParameter naming param when it
// is not one, ECodeBadFormat when code is not three letters.
func CurrencyOf(param, code string) (Currency, error) {
	c := strings.ToUpper(strings.TrimSpace(code))
	if !isUpperAlpha(c, 3) {
		return Currency{}, ParamErrorf(ECodeBadFormat, param, "%s must be an ISO 4217 currency code, e.g. EUR, got %q", param, Clip(code))
	}
	cur, ok := currencies[c]
	if !ok {
		return Currency{}, ParamErrorf(ECodeInvalidParameter, param, "%s is not a currency the network sells in", c)
	}
	return cur, nil
}

// Currencies returns every currency the network prices in, by code.
func Currencies() []Currency {
	out := make([]Currency, 0, len(currencies))
	for _, c := range currencies {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Currency) int { return strings.Compare(a.Code, b.Code) })
	return out
}

// Euros returns an amount of euro cents.
func Euros(cents int64) Money { return Money{Minor: cents, Currency: PricingCurrency} }

// In converts a euro amount into cur at its reference rate, rounding half to even once. A
// conversion into euros returns m unchanged.
func (m Money) In(cur Currency) Money {
	if m.Currency != PricingCurrency {
		panic("flightgraph: Money.In converts euro amounts only, got " + m.Currency)
	}
	if cur.Code == PricingCurrency {
		return m
	}
	// minor = cents × perEuro/10⁶ × 10^digits / 10²
	return Money{Minor: mulDiv(m.Minor, []int64{cur.PerEuro, pow10s[cur.Digits]}, 100_000_000), Currency: cur.Code}
}

// Add returns m + o; both must be in one currency. Like Times and In, it panics rather than
// wraps past int64: a wrapped amount is a wrong price that looks right.
func (m Money) Add(o Money) Money {
	if m.Currency != o.Currency && m.Currency != "" && o.Minor != 0 {
		panic("flightgraph: adding " + o.Currency + " to " + m.Currency)
	}
	if m.Currency == "" {
		m.Currency = o.Currency
	}
	sum := m.Minor + o.Minor
	if (sum > m.Minor) != (o.Minor > 0) {
		panic(fmt.Sprintf("flightgraph: %d + %d minor units overflow", m.Minor, o.Minor))
	}
	return Money{Minor: sum, Currency: m.Currency}
}

// Times returns m multiplied by n; it panics past int64, as Add does.
func (m Money) Times(n int) Money {
	hi, lo := bits.Mul64(uint64(abs(m.Minor)), uint64(abs(int64(n))))
	if hi != 0 || lo > math.MaxInt64 || m.Minor == math.MinInt64 || int64(n) == math.MinInt64 {
		panic(fmt.Sprintf("flightgraph: %d × %d minor units overflow", m.Minor, n))
	}
	return Money{Minor: m.Minor * int64(n), Currency: m.Currency}
}

// Decimal is the amount in the currency's major unit, exactly: "123.45", "16500" for JPY.
func (m Money) Decimal() string {
	digits := currencies[m.Currency].Digits
	s := strconv.FormatInt(abs(m.Minor), 10)
	if digits > 0 {
		if len(s) <= digits {
			s = strings.Repeat("0", digits-len(s)+1) + s
		}
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if m.Minor < 0 {
		s = "-" + s
	}
	return s
}

// ParseAmount reads an exact decimal amount in a currency's major unit ("123.45", "16500" for
// JPY); ECodeBadFormat for anything else, or more decimals than the currency has.
func ParseAmount(s, currency string) (Money, error) {
	cur, ok := currencies[currency]
	if !ok {
		return Money{}, ParamErrorf(ECodeInvalidParameter, "currency", "%q is not a currency the network sells in", Clip(currency))
	}
	neg := strings.HasPrefix(s, "-")
	n, err := parseDecimal(strings.TrimPrefix(s, "-"), cur.Digits)
	if err != nil || strings.HasPrefix(s, "-+") || len(s) > 24 {
		return Money{}, ParamErrorf(ECodeBadFormat, "amount", "%q is not an amount in %s, e.g. 123.45", Clip(s), currency)
	}
	if neg {
		n = -n
	}
	return Money{Minor: n, Currency: currency}, nil
}

// String is the amount and its currency, "123.45 EUR".
func (m Money) String() string { return m.Decimal() + " " + m.Currency }

// ScalePerMille returns the euro amount cents × the factors (each in thousandths), rounded half
// to even once: the fare rules multiply a base by several adjustments without a float.
func ScalePerMille(cents int64, perMille ...int64) int64 {
	den := int64(1)
	for range perMille {
		if den > math.MaxInt64/1000 {
			return scaleBig(cents, perMille)
		}
		den *= 1000
	}
	return mulDiv(cents, perMille, den)
}

func scaleBig(cents int64, perMille []int64) int64 {
	num, den := big.NewInt(cents), big.NewInt(1)
	for _, f := range perMille {
		num.Mul(num, big.NewInt(f))
		den.Mul(den, big.NewInt(1000))
	}
	return roundHalfEven(num, den)
}

var pow10s = [...]int64{1, 10, 100, 1000}

// mulDiv returns n × the factors ÷ den, rounded half to even, exactly: in 128 bits, which hold
// every price (cents below 10¹¹ times six factors below 10⁴), else with math/big. Factors are
// non-negative, den positive.
func mulDiv(n int64, factors []int64, den int64) int64 {
	neg := n < 0
	hi, lo := uint64(0), uint64(abs(n))
	for _, f := range factors {
		h1, l1 := bits.Mul64(lo, uint64(f))
		h2, l2 := bits.Mul64(hi, uint64(f))
		var carry uint64
		hi, carry = bits.Add64(h1, l2, 0)
		lo = l1
		if h2 != 0 || carry != 0 {
			return bigMulDiv(n, factors, den)
		}
	}
	if hi >= uint64(den) {
		return bigMulDiv(n, factors, den)
	}
	q, r := bits.Div64(hi, lo, uint64(den))
	if 2*r > uint64(den) || 2*r == uint64(den) && q&1 == 1 {
		q++
	}
	if q > math.MaxInt64 {
		return bigMulDiv(n, factors, den)
	}
	if neg {
		return -int64(q)
	}
	return int64(q)
}

func bigMulDiv(n int64, factors []int64, den int64) int64 {
	num := big.NewInt(n)
	for _, f := range factors {
		num.Mul(num, big.NewInt(f))
	}
	return roundHalfEven(num, big.NewInt(den))
}

// roundHalfEven returns num/den rounded to the nearest integer, ties to even; den > 0.
func roundHalfEven(num, den *big.Int) int64 {
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	twice := new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2))
	switch c := twice.Cmp(den); {
	case c > 0, c == 0 && q.Bit(0) == 1:
		if num.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if !q.IsInt64() {
		panic("flightgraph: an amount past int64: " + q.String()) // no price comes near; never wrap
	}
	return q.Int64()
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// parseDecimal reads a non-negative decimal text as an integer of 10^-scale units.
func parseDecimal(s string, scale int) (int64, error) {
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || dot && frac == "" || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a decimal", s)
	}
	if len(frac) > scale {
		return 0, fmt.Errorf("%q has more than %d decimals", s, scale)
	}
	n, err := strconv.ParseInt(whole+frac+strings.Repeat("0", scale-len(frac)), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a decimal", s)
	}
	return n, nil
}
