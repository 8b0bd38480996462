package catalog

import (
	"cmp"
	"math/big"
	"slices"
	"time"
)

// ComparePlans orders two plans by what they allow, as an upgrade raises the window, weekly
// and burst limits: the window allowance per unit of time first (windows may differ in
// length), then the weekly cap, then the burst limit; 0 (unlimited) is above every count.
// It is negative when a allows less than b, 0 when the same, positive when more.
func ComparePlans(a, b *Plan) int {
	if c := compareRate(a.WindowRequests, a.Window, b.WindowRequests, b.Window); c != 0 {
		return c
	}
	if c := compareLimit(a.WeeklyRequests, b.WeeklyRequests); c != 0 {
		return c
	}
	return compareLimit(a.BurstRPM, b.BurstRPM)
}

// compareLimit orders two counts where 0 is unlimited.
func compareLimit(a, b int64) int {
	switch {
	case a == b:
		return 0
	case a == 0:
		return 1
	case b == 0:
		return -1
	}
	return cmp.Compare(a, b)
}

// compareRate orders n1 per d1 against n2 per d2 exactly (n1·d2 against n2·d1, which can
// pass 2^63 for the largest counts and windows).
func compareRate(n1 int64, d1 time.Duration, n2 int64, d2 time.Duration) int {
	if n1 == 0 || n2 == 0 || d1 <= 0 || d2 <= 0 {
		return compareLimit(n1, n2)
	}
	l := new(big.Int).Mul(big.NewInt(n1), big.NewInt(int64(d2/time.Second)))
	r := new(big.Int).Mul(big.NewInt(n2), big.NewInt(int64(d1/time.Second)))
	return l.Cmp(r)
}

// PlanByPrice is the plan sold at Stripe price id.
func (c *Catalog) PlanByPrice(price string) (*Plan, bool) {
	if price == "" {
		return nil, false
	}
	for _, p := range c.Plans() {
		if p.StripePrice == price {
			return p, true
		}
	}
	return nil, false
}

// PurchasablePlans are the plans sold as Stripe subscriptions, from the one allowing least.
func (c *Catalog) PurchasablePlans() []*Plan {
	var out []*Plan
	for _, p := range c.Plans() {
		if p.StripePrice != "" {
			out = append(out, p)
		}
	}
	slices.SortStableFunc(out, ComparePlans)
	return out
}
