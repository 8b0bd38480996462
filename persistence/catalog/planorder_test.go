package catalog

import (
	"strings"
	"testing"
	"time"
)

func TestComparePlansByWhatTheyAllow(t *testing.T) {
	plan := func(window int64, w time.Duration, weekly, burst int64) *Plan {
		return &Plan{WindowRequests: window, Window: w, WeeklyRequests: weekly, BurstRPM: burst}
	}
	h5 := 5 * time.Hour
	cases := []struct {
		name string
		a, b *Plan
		want int
	}{
		{"a larger window", plan(1000, h5, 10, 10), plan(100, h5, 10, 10), 1},
		{"a smaller window", plan(100, h5, 10, 10), plan(1000, h5, 10, 10), -1},
		{"the same window over a longer time allows less", plan(100, 10*time.Hour, 10, 10), plan(100, h5, 10, 10), -1},
		{"the same rate over different windows", plan(200, 10*time.Hour, 10, 10), plan(100, h5, 10, 10), 0},
		{"unlimited window above any count", plan(0, h5, 10, 10), plan(1_000_000_000_000, time.Minute, 10, 10), 1},
		{"equal windows: the weekly cap decides", plan(100, h5, 500, 10), plan(100, h5, 1000, 1), -1},
		{"unlimited weekly above a cap", plan(100, h5, 0, 10), plan(100, h5, 1000, 10), 1},
		{"equal windows and weekly: the burst decides", plan(100, h5, 500, 60), plan(100, h5, 500, 10), 1},
		{"the same limits", plan(100, h5, 500, 10), plan(100, h5, 500, 10), 0},
		{"the largest counts over the longest windows do not overflow", plan(1_000_000_000_000, 8760*time.Hour, 0, 0), plan(999_999_999_999, 8760*time.Hour, 0, 0), 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ComparePlans(c.a, c.b); got != c.want {
				t.Errorf("ComparePlans = %d, want %d", got, c.want)
			}
		})
	}
}

const subscriptionPlans = `plans:
  - {name: free, window_requests: 10}
  - {name: pro, window_requests: 1000, stripe_price: price_pro}
  - {name: basic, window_requests: 100, stripe_price: price_basic}
`

func TestPlansSoldThroughStripe(t *testing.T) {
	t.Setenv("T_SK", "sk_test_1")
	t.Setenv("T_WH", "whsec_1")
	c, err := Parse("f.yaml", []byte(subscriptionPlans+billingBase+"{secret_key_env: T_SK, webhook_secret_env: T_WH}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range c.PurchasablePlans() {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "basic,pro" || c.Billing.Stripe.DefaultPlan != "free" {
		t.Errorf("purchasable %v, default plan %q: want basic,pro and free", names, c.Billing.Stripe.DefaultPlan)
	}
	if p, ok := c.PlanByPrice("price_pro"); !ok || p.Name != "pro" {
		t.Errorf("PlanByPrice(price_pro) = %v, %v", p, ok)
	}
	if _, ok := c.PlanByPrice("price_other"); ok {
		t.Error("an unknown price sells a plan")
	}
}

// A catalog that sells no plan needs no default plan.
func TestCreditsAloneNeedNoDefaultPlan(t *testing.T) {
	t.Setenv("T_SK", "sk_test_1")
	t.Setenv("T_WH", "whsec_1")
	if _, err := Parse("f.yaml", []byte("plans:\n  - {name: gold}\n"+billingBase+"{secret_key_env: T_SK, webhook_secret_env: T_WH}\n")); err != nil {
		t.Fatal(err)
	}
}

func TestPlansSoldThroughStripeErrorsNameTheField(t *testing.T) {
	t.Setenv("T_SK", "sk_test_1")
	t.Setenv("T_WH", "whsec_1")
	stripe := billingBase + "{secret_key_env: T_SK, webhook_secret_env: T_WH}\n"
	cases := []struct{ name, file, want string }{
		{"no billing.stripe", subscriptionPlans + strings.TrimSuffix(billingBase, "billing:\n  stripe: ") + "\n",
			"plan basic: stripe_price: needs billing.stripe"},
		{"one price for two plans", "plans:\n  - {name: free}\n  - {name: a, stripe_price: price_x}\n  - {name: b, stripe_price: price_x}\n" + stripe,
			"plan b: stripe_price: price_x already sells plan a"},
		{"not a price id", "plans:\n  - {name: free}\n  - {name: a, stripe_price: prod_x}\n" + stripe,
			`plan a: stripe_price: "prod_x" is not a Stripe price id`},
		{"no default plan where a plan is sold", "plans:\n  - {name: a, stripe_price: price_x}\n" + stripe,
			`billing.stripe.default_plan: "free" is not one of the plans`},
		{"an unknown default plan", "plans:\n  - {name: free}\n" + billingBase + "{secret_key_env: T_SK, webhook_secret_env: T_WH, default_plan: gold}\n",
			`billing.stripe.default_plan: "gold" is not one of the plans`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(c.file))
			if err == nil || !strings.Contains(err.Error(), "f.yaml: "+c.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}
