package browsertest

import (
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestBuyingCreditsFromTheCreditsPage: the credits page offers the catalog's top-ups, sends
// the buyer to the payment provider's hosted page (the simulator's Stripe), and once they
// pay and come back shows the balance the provider's signed webhook granted.
func TestBuyingCreditsFromTheCreditsPage(t *testing.T) {
	b := Start(t)
	t.Setenv("BROWSERTEST_STRIPE_KEY", "sk_test_browser")
	t.Setenv("BROWSERTEST_STRIPE_WHSEC", "whsec_browser")
	env := nodetest.Start(t, nodetest.DefaultCatalog+"billing:\n  stripe: {secret_key_env: BROWSERTEST_STRIPE_KEY, webhook_secret_env: BROWSERTEST_STRIPE_WHSEC,"+
		" api_base: \"{{SIM}}\", credit_amounts: [\"10.00\", \"25.00\"]}\n", nodetest.Options{})
	env.Sim.StripeWebhook(env.Node.URL+billing.WebhookPath, "whsec_browser")
	const password = "a long enough passphrase 42"
	if resp := env.Admin(http.MethodPut, "/admin/v1/accounts/"+env.Account.ID+"/password", `{"password":"`+password+`"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("set the password: %d %s", resp.StatusCode, nodetest.Read(t, resp))
	}
	base := env.Node.URL

	b.Open(base + "/dashboard/login")
	b.Fill("#email", env.Account.Email)
	b.Fill("#password", password)
	b.Click("#login-form button[type=submit]")
	b.WaitPath("/dashboard/")

	b.Open(base + "/dashboard/credits")
	b.WaitVisible("#buy-form")
	before := b.WaitText("#balance", "$")
	b.SetValue("#buy-amount", "25.00")
	b.Screenshot("credits-buy")
	b.Click("#buy-button")

	// The provider's page: pay.
	b.WaitVisible("#pay")
	b.Screenshot("stripe-checkout")
	b.ClickForeign("#pay")

	// Back on the credits page: the thank-you note, then the granted balance.
	b.WaitPath("/dashboard/credits")
	b.WaitVisible("#paid-note")
	b.WaitFor("the balance to grow by $25.00", `document.querySelector("#balance").textContent !== `+jsString(before), func() string { return b.Text("#balance") })
	b.WaitText("#credit-rows", "Top-up")
	b.Screenshot("credits-paid")
	if got := b.Text("#balance"); got == before {
		t.Fatalf("balance still %s", got)
	}
	b.ExpectNoProblems()
}
