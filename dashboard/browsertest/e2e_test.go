// The end-to-end dashboard test: a person goes from nothing to a first answer
// and its cost on the usage page, in a real Chromium, against a real node and the simulator,
// with the verification mail received by a real SMTP server.
package browsertest

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// startGatewayWithMail starts a node and the simulator the way transport/node tests do,
// with the config file's auth section sending the node's mail to mail over SMTP and new
// accounts on the demo plan.
func startGatewayWithMail(t *testing.T, mail *MailServer) *nodetest.Env {
	return nodetest.Start(t, nodetest.DefaultCatalog+"auth:\n  signup_plan: demo\n  mail: {host: "+mail.Host+", port: "+
		strconv.Itoa(mail.Port)+", security: none, from: \"modelgate <modelgate@localhost>\"}\n", nodetest.Options{})
}

func TestDashboardEndToEndFromSignupToTheCostOfAFirstCall(t *testing.T) {
	b := Start(t)
	mail := StartMailServer(t)
	env := startGatewayWithMail(t, mail)
	base := env.Node.URL
	const email, password = "e2e-person@example.com", "a long enough passphrase 42"

	// Sign up.
	b.Open(base + "/dashboard/signup")
	b.Fill("#email", email)
	b.Fill("#password", password)
	b.Screenshot("signup")
	b.Click("#signup-form button[type=submit]")
	b.WaitVisible("#signup-done")
	b.Screenshot("signup-sent")

	// The verification mail, received by the SMTP server; its link followed in the browser.
	msg, err := mail.WaitFor(email, 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	link, err := msg.Link("/auth/verify")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link, base+"/") {
		t.Fatalf("the verification link %q does not point at the gateway %s", link, base)
	}
	b.Open(link)
	b.WaitPath("/dashboard/login")
	b.WaitText("#login-notice", "Your e-mail is verified.")
	b.Screenshot("verified-login")

	// Log in: the overview shows the plan.
	b.Fill("#email", email)
	b.Fill("#password", password)
	b.Click("#login-form button[type=submit]")
	b.WaitPath("/dashboard/")
	b.WaitFor("the plan", `document.querySelector("#plan").textContent.trim() !== "…"`, func() string { return b.Text("#page-error") })
	b.Screenshot("overview")

	// Create a key; its secret is read from the page.
	b.Open(base + "/dashboard/keys")
	b.Fill("#create-name", "e2e laptop")
	b.Click("#create-key-form button[type=submit]")
	b.WaitVisible("#new-secret")
	secret := b.Value("#secret-value")
	if !strings.HasPrefix(secret, "sk-") {
		t.Fatalf("the page shows %q as the new key", secret)
	}
	b.WaitText("#key-rows", "e2e laptop")
	b.Screenshot("key-created")

	// A real chat completion with it, against the simulator, from an interactive client (a
	// new account's plan may serve only those).
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat/completions",
		strings.NewReader(`{"model":"chat","messages":[{"role":"user","content":"hello from the dashboard test"}]}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "claude-cli/2.0.0 (external, cli)")
	resp, err := env.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("chat completion with the dashboard's key: %d %s", resp.StatusCode, body)
	}
	requestID := resp.Header.Get("X-Request-Id")
	if requestID == "" {
		t.Fatal("no X-Request-Id on the answer")
	}

	// The call's log entry, as the account API has it: what the page must show.
	genReq, _ := http.NewRequest(http.MethodGet, base+"/v1/generations/"+requestID, nil)
	genReq.Header.Set("Authorization", "Bearer "+secret)
	genResp, err := env.Client.Do(genReq)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Data struct {
			CostUSD     string `json:"cost_usd"`
			ListCostUSD string `json:"list_cost_usd"`
			Model       string `json:"model"`
		} `json:"data"`
	}
	genBody, _ := io.ReadAll(genResp.Body)
	genResp.Body.Close()
	if err := json.Unmarshal(genBody, &out); err != nil || genResp.StatusCode != 200 || out.Data.ListCostUSD == "" || out.Data.Model != "chat" {
		t.Fatalf("GET /v1/generations/%s: %d %s", requestID, genResp.StatusCode, genBody)
	}
	gen := out.Data
	if h := resp.Header.Get("X-Modelgate-Cost"); h != gen.CostUSD {
		t.Errorf("X-Modelgate-Cost %q, the generation's cost_usd %q", h, gen.CostUSD)
	}

	// The usage page shows that call with its cost.
	b.Open(base + "/dashboard/usage")
	row := `#usage-rows tr[data-request-id="` + requestID + `"]`
	b.WaitFor("the call's row", `document.querySelector(`+jsString(row)+`)`, func() string { return b.Text("#usage-rows") + b.Text("#page-error") })
	if got := b.Text(row + " td:nth-child(2)"); got != "chat" {
		t.Errorf("the row's model %q, want chat", got)
	}
	if got, want := b.Text(row+" td:nth-child(8)"), "$"+gen.CostUSD; got != want {
		t.Errorf("the row's cost %q, want %q", got, want)
	}
	if got, want := b.Text(row+" td:nth-child(9)"), "$"+gen.ListCostUSD; got != want {
		t.Errorf("the row's cost at model prices %q, want %q", got, want)
	}
	b.WaitFor("the chart", `document.querySelectorAll("#usage-chart rect.bar").length === 1`, func() string { return b.Text("#usage-chart") })
	b.Screenshot("usage")

	b.Open(base + "/dashboard/credits")
	b.WaitFor("the balance", `document.querySelector("#balance").textContent.trim().startsWith("$")`, func() string { return b.Text("#page-error") })
	b.Screenshot("credits")
	b.ExpectNoProblems()
}
