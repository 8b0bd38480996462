package simulator

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// StripePrice is what a subscription price id costs in the fake Stripe account. A gateway
// names prices it created in the Stripe dashboard; the fake accepts any price_… id, so a test
// only sets the ones whose amount it asserts.
type StripePrice struct {
	UnitAmount int64  // per period, in the currency's smallest unit (cents)
	Currency   string // ISO 4217, any case; rendered lowercase as Stripe does
	Interval   string // "month" (also when empty) or "year"
}

// defaultStripePrice is the price of an id no test has set.
var defaultStripePrice = StripePrice{UnitAmount: 1000, Currency: "usd", Interval: "month"}

// SetStripePrice sets what price id costs from now on; subscriptions already created keep
// the price they were created with until UpdateSubscription changes it.
func (s *Server) SetStripePrice(id string, p StripePrice) error {
	p, err := checkStripePrice(id, p)
	if err != nil {
		return err
	}
	s.stripe.prices.put(id, p)
	return nil
}

// checkStripePrice validates a price and returns it in its canonical form.
func checkStripePrice(id string, p StripePrice) (StripePrice, error) {
	p.Currency = strings.ToLower(p.Currency)
	if p.Interval == "" {
		p.Interval = "month"
	}
	switch {
	case !strings.HasPrefix(id, "price_"):
		return p, fmt.Errorf("simulator: price id %q must start with price_", id)
	case p.UnitAmount <= 0:
		return p, fmt.Errorf("simulator: price %s: unit amount must be positive, got %d", id, p.UnitAmount)
	case !isCurrency(p.Currency):
		return p, fmt.Errorf("simulator: price %s: currency %q is not a three-letter ISO code", id, p.Currency)
	case p.Interval != "month" && p.Interval != "year":
		return p, fmt.Errorf("simulator: price %s: interval must be month or year, got %q", id, p.Interval)
	}
	return p, nil
}

// price renders price id as the API does, with the amount set for it or the default.
func (s *Server) price(id string) priceObject {
	p, ok := s.stripe.prices.get(id)
	if !ok {
		p = defaultStripePrice
	}
	return priceObject{ID: id, Object: "price", Active: true, Currency: p.Currency, Metadata: map[string]string{},
		// The product id is derived so a price always names the same product.
		Product: "prod_" + strings.TrimPrefix(id, "price_"),
		Recurring: &priceRecurringObject{Interval: stripe.PriceRecurringInterval(p.Interval), IntervalCount: 1,
			UsageType: stripe.PriceRecurringUsageTypeLicensed},
		Type: stripe.PriceTypeRecurring, UnitAmount: p.UnitAmount, UnitAmountDecimal: strconv.FormatInt(p.UnitAmount, 10)}
}

// periodEnd is when a billing period of price starting at start ends: 30 days for a month,
// 365 for a year, so tests can compute it without a calendar.
func periodEnd(p priceObject, start time.Time) time.Time {
	if p.Recurring != nil && p.Recurring.Interval == stripe.PriceRecurringIntervalYear {
		return start.AddDate(0, 0, 365)
	}
	return start.AddDate(0, 0, 30)
}

// isCurrency reports whether c looks like a lowercase ISO 4217 code. The fake does not
// know which currencies Stripe supports; it only refuses what cannot be one.
func isCurrency(c string) bool {
	if len(c) != 3 {
		return false
	}
	for _, r := range c {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}
