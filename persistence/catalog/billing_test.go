package catalog

import (
	"strings"
	"testing"
)

const billingBase = "models:\n  - {id: m, kind: chat, routes: [{id: r, format: chat, base_url: 'http://x'}]}\nbilling:\n  stripe: "

func TestStripeBillingLoads(t *testing.T) {
	t.Setenv("T_SK", "sk_test_1")
	t.Setenv("T_WH", "whsec_1")
	c, err := Parse("f.yaml", []byte(billingBase+"{secret_key_env: T_SK, webhook_secret_env: T_WH, credit_amounts: ['10.00', '25.50']}\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Billing.Stripe
	if s.APIBase != DefaultStripeAPIBase || s.Currency != "usd" || len(s.CreditAmounts) != 2 || s.CreditAmounts[1] != 2550 {
		t.Fatalf("stripe = %+v", s)
	}
	for cents, want := range map[int64]bool{1000: true, 2550: true, 2500: false} {
		if s.AllowsCredit(cents) != want {
			t.Errorf("AllowsCredit(%d) = %v, want %v", cents, !want, want)
		}
	}
	if CentsToCredits(2550).String() != "25.5" {
		t.Errorf("2550 cents = %s credits", CentsToCredits(2550))
	}
	c, _ = Parse("f.yaml", []byte(billingBase+"{secret_key_env: T_SK, webhook_secret_env: T_WH, min_credit: '5.00', max_credit: '100.00'}\n"))
	if s := c.Billing.Stripe; !s.AllowsCredit(500) || s.AllowsCredit(499) || !s.AllowsCredit(10000) || s.AllowsCredit(10001) {
		t.Errorf("min/max = %d/%d", s.MinCreditCents, s.MaxCreditCents)
	}
	if c, _ := Parse("f.yaml", []byte(strings.TrimSuffix(billingBase, "billing:\n  stripe: ")+"\n")); c.Billing.Stripe != nil {
		t.Error("no billing section, yet Stripe is on")
	}
}

func TestStripeBillingErrorsNameTheField(t *testing.T) {
	t.Setenv("T_SK", "sk_test_1")
	t.Setenv("T_WH", "whsec_1")
	cases := []struct{ name, stripe, want string }{
		{"no secret key", "{webhook_secret_env: T_WH}", "billing.stripe.secret_key_env: is required"},
		{"unset webhook secret", "{secret_key_env: T_SK, webhook_secret_env: T_UNSET_WH}", "billing.stripe.webhook_secret_env: environment variable T_UNSET_WH is not set"},
		{"another currency", "{secret_key_env: T_SK, webhook_secret_env: T_WH, currency: eur}", `billing.stripe.currency: "eur": credits are counted in US dollars`},
		{"fractions of a cent", "{secret_key_env: T_SK, webhook_secret_env: T_WH, credit_amounts: ['10.005']}", `billing.stripe.credit_amounts[0]: "10.005" must be a USD amount in whole cents`},
		{"below Stripe's minimum", "{secret_key_env: T_SK, webhook_secret_env: T_WH, credit_amounts: ['0.10']}", `billing.stripe.credit_amounts[0]: "0.10" must be between 0.50`},
		{"min above max", "{secret_key_env: T_SK, webhook_secret_env: T_WH, min_credit: '50.00', max_credit: '10.00'}", "billing.stripe.min_credit: is above max_credit"},
		{"a bad api_base", "{secret_key_env: T_SK, webhook_secret_env: T_WH, api_base: 'ftp://stripe'}", `billing.stripe.api_base: "ftp://stripe" must be an absolute http(s) URL`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(billingBase+c.stripe+"\n"))
			if err == nil || !strings.Contains(err.Error(), "f.yaml: "+c.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}
