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
	b, base := loggedInWithStripe(t, "", `, credit_amounts: ["10.00", "25.00"]`, nodetest.Options{})

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

// TestChangingPlanFromThePlanPage: the plan page lists the plans on sale, sends the buyer to
// the payment provider's hosted page to subscribe, and once they pay and come back shows the
// plan the provider's signed webhooks moved the account to, with its renewal; the billing
// portal's cancellation then shows as a move to the default plan at the period's end.
func TestChangingPlanFromThePlanPage(t *testing.T) {
	b, base := loggedInWithStripe(t, "plans:\n  - {name: free, window_requests: 10}\n"+
		"  - {name: basic, window_requests: 100, stripe_price: price_basic}\n  - {name: pro, window_requests: 1000, stripe_price: price_pro}\n",
		"", nodetest.Options{Plan: "free"})

	b.Open(base + "/dashboard/plan")
	b.WaitVisible("#plans-form")
	b.WaitText("#plan-name", "free")
	b.Screenshot("plan-choose")
	b.Click("#choose-pro")

	// The provider's page: pay.
	b.WaitVisible("#pay")
	b.ClickForeign("#pay")

	// Back on the plan page: the thank-you note, then the plan and its renewal.
	b.WaitPath("/dashboard/plan")
	b.WaitVisible("#paid-note")
	b.WaitText("#plan-name", "pro")
	b.WaitText("#subscription", "renews on")
	b.Screenshot("plan-subscribed")

	// Stripe's billing portal: cancel, and back.
	b.Click("#portal-button")
	b.WaitVisible("section.subscription")
	b.ClickForeign("section.subscription form button")
	b.WaitVisible("p.cancels")
	b.ClickForeign("#return")
	b.WaitPath("/dashboard/plan")
	b.WaitText("#plan-next", "Moves to free")
	b.WaitText("#subscription", "ends on")
	b.Screenshot("plan-cancelled")
	if got := b.Text("#plan-name"); got != "pro" {
		t.Errorf("plan %q after cancelling, want pro to the period's end", got)
	}
	b.ExpectNoProblems()
}

// loggedInWithStripe starts a node whose catalog adds sections (before billing) and sells
// through the simulator's Stripe (billing.stripe plus stripe, e.g. its credit amounts), and
// logs its account in on the dashboard: the browser and the node's address.
func loggedInWithStripe(t *testing.T, sections, stripe string, opt nodetest.Options) (*Browser, string) {
	b := Start(t)
	t.Setenv("BROWSERTEST_STRIPE_KEY", "sk_test_browser")
	t.Setenv("BROWSERTEST_STRIPE_WHSEC", "whsec_browser")
	env := nodetest.Start(t, nodetest.DefaultCatalog+sections+"billing:\n  stripe: {secret_key_env: BROWSERTEST_STRIPE_KEY, webhook_secret_env: BROWSERTEST_STRIPE_WHSEC,"+
		" api_base: \"{{SIM}}\""+stripe+"}\n", opt)
	env.Sim.StripeWebhook(env.Node.URL+billing.WebhookPath, "whsec_browser")
	const password = "a long enough passphrase 42"
	if resp := env.Admin(http.MethodPut, "/admin/v1/accounts/"+env.Account.ID+"/password", `{"password":"`+password+`"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("set the password: %d %s", resp.StatusCode, nodetest.Read(t, resp))
	}
	b.Open(env.Node.URL + "/dashboard/login")
	b.Fill("#email", env.Account.Email)
	b.Fill("#password", password)
	b.Click("#login-form button[type=submit]")
	b.WaitPath("/dashboard/")
	return b, env.Node.URL
}
