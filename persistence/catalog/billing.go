package catalog

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelgate/modelgate/codec/money"
)

// Billing is the file's billing section: how account holders pay for themselves. Without
// billing.stripe there is no payment page and no webhook route.
type Billing struct {
	Stripe *Stripe
}

// Stripe is billing.stripe: the account, its webhook endpoint's secret, and what may be bought.
type Stripe struct {
	// SecretKeyEnv and WebhookSecretEnv name the variables holding Stripe's secret key and
	// the webhook endpoint's signing secret: never the secrets themselves.
	SecretKeyEnv     string
	WebhookSecretEnv string
	// APIBase is Stripe's API address (https://api.stripe.com); the demo points it at the
	// simulator's Stripe.
	APIBase string
	// SuccessURL and CancelURL are where Stripe's checkout sends the buyer back ("" = the
	// dashboard's credits page on the gateway's own address).
	SuccessURL, CancelURL string
	// Currency is what is charged: usd, the currency credits are counted in.
	Currency string
	// CreditAmounts are the top-ups on offer, in cents; with none, any amount from
	// MinCreditCents to MaxCreditCents.
	CreditAmounts                  []int64
	MinCreditCents, MaxCreditCents int64
	// DefaultPlan is the plan an account returns to when its subscription ends (default
	// free); it must be one of the file's plans when a plan is sold (or it is given).
	DefaultPlan string
}

// CentsToCredits is a Stripe amount in cents as credits, exactly.
func CentsToCredits(cents int64) money.Amount { return money.Amount(cents) * centAmount }

// centAmount is one US cent as an Amount.
var centAmount = mustParse("0.01")

func mustParse(s string) money.Amount {
	a, err := money.Parse(s)
	if err != nil {
		panic(err)
	}
	return a
}

// Stripe's smallest and a sane largest USD charge, the defaults of min and max.
const (
	stripeMinCents       = 50
	defaultMaxCredit     = 100_000 // $1,000
	maxStripeCharge      = 99_999_999
	DefaultStripeAPIBase = "https://api.stripe.com"
)

// AllowsCredit reports whether a top-up of cents may be bought.
func (s *Stripe) AllowsCredit(cents int64) bool {
	if len(s.CreditAmounts) > 0 {
		for _, a := range s.CreditAmounts {
			if a == cents {
				return true
			}
		}
		return false
	}
	return cents >= s.MinCreditCents && cents <= s.MaxCreditCents
}

type billingDoc struct {
	Stripe *stripeDoc `yaml:"stripe"`
}

type stripeDoc struct {
	SecretKeyEnv     string   `yaml:"secret_key_env"`
	WebhookSecretEnv string   `yaml:"webhook_secret_env"`
	APIBase          string   `yaml:"api_base"`
	SuccessURL       string   `yaml:"success_url"`
	CancelURL        string   `yaml:"cancel_url"`
	Currency         string   `yaml:"currency"`
	CreditAmounts    []string `yaml:"credit_amounts"`
	MinCredit        string   `yaml:"min_credit"`
	MaxCredit        string   `yaml:"max_credit"`
	DefaultPlan      string   `yaml:"default_plan"`
}

func (v *validator) billing(c *Catalog, d billingDoc) Billing {
	v.stripePrices(c, d.Stripe != nil)
	if d.Stripe == nil {
		return Billing{}
	}
	s, f := d.Stripe, func(name string) string { return "billing.stripe." + name }
	out := &Stripe{SecretKeyEnv: s.SecretKeyEnv, WebhookSecretEnv: s.WebhookSecretEnv,
		APIBase: strings.TrimRight(cmp.Or(s.APIBase, DefaultStripeAPIBase), "/"), SuccessURL: s.SuccessURL, CancelURL: s.CancelURL,
		Currency: cmp.Or(s.Currency, "usd"), MinCreditCents: stripeMinCents, MaxCreditCents: defaultMaxCredit}
	for name, env := range map[string]string{"secret_key_env": s.SecretKeyEnv, "webhook_secret_env": s.WebhookSecretEnv} {
		if env == "" {
			v.fail("", f(name), "is required: the name of the environment variable with the secret")
		}
		v.envSet("", f(name), env)
	}
	for name, u := range map[string]string{"api_base": out.APIBase, "success_url": s.SuccessURL, "cancel_url": s.CancelURL} {
		if p, err := url.Parse(u); u != "" && (err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "") {
			v.fail("", f(name), fmt.Sprintf("%q must be an absolute http(s) URL", u))
		}
	}
	if out.Currency != "usd" {
		v.fail("", f("currency"), fmt.Sprintf("%q: credits are counted in US dollars, so only usd can buy them", out.Currency))
	}
	for i, a := range s.CreditAmounts {
		if c, ok := v.cents(f(fmt.Sprintf("credit_amounts[%d]", i)), a); ok {
			out.CreditAmounts = append(out.CreditAmounts, c)
		}
	}
	if s.MinCredit != "" {
		out.MinCreditCents, _ = v.cents(f("min_credit"), s.MinCredit)
	}
	if s.MaxCredit != "" {
		out.MaxCreditCents, _ = v.cents(f("max_credit"), s.MaxCredit)
	}
	if out.MinCreditCents > out.MaxCreditCents {
		v.fail("", f("min_credit"), "is above max_credit")
	}
	out.DefaultPlan = cmp.Or(s.DefaultPlan, "free")
	// Needed only where subscriptions can end: a catalog selling no plan may lack it.
	if _, ok := c.Plan(out.DefaultPlan); !ok && (s.DefaultPlan != "" || len(c.PurchasablePlans()) > 0) {
		v.fail("", f("default_plan"), fmt.Sprintf("%q is not one of the plans (where a subscription that ends leaves its account)", out.DefaultPlan))
	}
	return Billing{Stripe: out}
}

// stripePrices checks the plans sold through Stripe: each price sells one plan, and only
// with billing.stripe configured.
func (v *validator) stripePrices(c *Catalog, configured bool) {
	seller := map[string]string{}
	for _, p := range c.Plans() {
		switch {
		case p.StripePrice == "":
		case !configured:
			v.failPlan(p.Name, "stripe_price", "needs billing.stripe (the Stripe account that sells it)")
		case seller[p.StripePrice] != "":
			v.failPlan(p.Name, "stripe_price", fmt.Sprintf("%s already sells plan %s", p.StripePrice, seller[p.StripePrice]))
		default:
			seller[p.StripePrice] = p.Name
		}
	}
}

// WholeCents is a in cents; false when a is not a positive amount of whole cents.
func WholeCents(a money.Amount) (int64, bool) {
	if a <= 0 || a%centAmount != 0 {
		return 0, false
	}
	return int64(a / centAmount), true
}

// cents reads a USD amount Stripe can charge: whole cents, from $0.50.
func (v *validator) cents(field, s string) (int64, bool) {
	a, err := money.Parse(s)
	c, whole := WholeCents(a)
	if err != nil || !whole {
		v.fail("", field, fmt.Sprintf("%q must be a USD amount in whole cents, such as \"25.00\"", s))
		return 0, false
	}
	if c < stripeMinCents || c > maxStripeCharge {
		v.fail("", field, fmt.Sprintf("%q must be between 0.50 and 999999.99 (what Stripe charges)", s))
		return 0, false
	}
	return c, true
}
