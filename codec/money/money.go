// Package money holds exact USD amounts: integers of pico-dollars, never floats.
package money

import (
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Amount is a USD amount in pico-dollars (1e-12 USD). Per-token prices as small as
// $0.001 per million tokens (1e-9 USD) stay exact, and int64 still holds $9.2 million.
type Amount int64

// Scale is the number of decimal places an Amount keeps.
const Scale = 12

const unit = 1_000_000_000_000

// Parse reads a non-negative decimal string such as "0.0000025" exactly. More than
// twelve decimal places, signs, exponents and anything that is not a plain decimal are errors.
func Parse(s string) (Amount, error) {
	if s == "" {
		return 0, fmt.Errorf("empty amount")
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && (!hasDot || frac == "") {
		return 0, fmt.Errorf("amount %q is not a decimal number", s)
	}
	if hasDot && frac == "" {
		return 0, fmt.Errorf("amount %q is not a decimal number", s)
	}
	if !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("amount %q is not a plain non-negative decimal number", s)
	}
	if len(frac) > Scale {
		return 0, fmt.Errorf("amount %q has more than %d decimal places", s, Scale)
	}
	var w big.Int
	if whole != "" {
		w.SetString(whole, 10)
	}
	w.Mul(&w, big.NewInt(unit))
	if frac != "" {
		var f big.Int
		f.SetString(frac+strings.Repeat("0", Scale-len(frac)), 10)
		w.Add(&w, &f)
	}
	if !w.IsInt64() {
		return 0, fmt.Errorf("amount %q is too large", s)
	}
	return Amount(w.Int64()), nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String renders the amount as a decimal string without trailing zeros ("0.0000025", "3", "-0.5").
func (a Amount) String() string {
	neg := a < 0
	u := uint64(a)
	if neg {
		u = uint64(-(a + 1)) + 1 // exact for math.MinInt64 too
	}
	whole, frac := u/unit, u%unit
	s := fmt.Sprintf("%d", whole)
	if frac != 0 {
		fs := strings.TrimRight(fmt.Sprintf("%012d", frac), "0")
		s += "." + fs
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Times returns a*n, saturating at the int64 range instead of wrapping, so an absurd token
// count can never turn a charge into a credit.
func (a Amount) Times(n int64) Amount {
	if a == 0 || n == 0 {
		return 0
	}
	hi, lo := mulOverflows(int64(a), n)
	if hi {
		if (a < 0) != (n < 0) {
			return Amount(math.MinInt64)
		}
		return Amount(math.MaxInt64)
	}
	return Amount(lo)
}

func mulOverflows(a, b int64) (bool, int64) {
	c := a * b
	if a != 0 && (c/a != b || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64)) {
		return true, 0
	}
	return false, c
}
