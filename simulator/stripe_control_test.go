package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// The fake Stripe steered over HTTP, as a test in another process does.

// controlEvent calls a control endpoint that answers with an event record.
func controlEvent(t *testing.T, method, url, body string) StripeEventRecord {
	t.Helper()
	resp, data := call(t, method, url, body, "-")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, data)
	}
	var rec StripeEventRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s %s: %v in %s", method, url, err, data)
	}
	return rec
}

// statuses lists the answer status of each delivery of rec.
func statuses(rec StripeEventRecord) []int {
	out := []int{}
	for _, d := range rec.Deliveries {
		out = append(out, d.Status)
	}
	return out
}

func TestStripeControlAPI(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	ctl := base + "/_sim/stripe"

	resp, data := call(t, http.MethodPut, ctl+"/webhook", fmt.Sprintf(`{"url":%q,"secret":%q}`, recv.URL, testWebhookSecret), "-")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT webhook: %d %s", resp.StatusCode, data)
	}
	assertJSON(t, data, fmt.Sprintf(`{"webhooks":[%q]}`, recv.URL))
	_, data = call(t, http.MethodGet, ctl+"/webhook", "", "-")
	assertJSON(t, data, fmt.Sprintf(`{"webhooks":[%q]}`, recv.URL)) // never the secret
	_, data = call(t, http.MethodPut, ctl+"/prices/price_pro", `{"unit_amount":2900,"currency":"EUR"}`, "-")
	assertJSON(t, data, `{"id":"price_pro","unit_amount":2900,"currency":"eur","interval":"month"}`)
	_, data = call(t, http.MethodPut, ctl+"/prices/price_team", `{"unit_amount":29000,"currency":"eur","interval":"year"}`, "-")
	assertJSON(t, data, `{"id":"price_team","unit_amount":29000,"currency":"eur","interval":"year"}`)

	sc := stripeClient(base, testStripeKey)
	sess := paymentSession(t, sc, "")
	payHosted(t, sess.URL)
	paidEvent := s.StripeEvents()[0].ID

	refund := controlEvent(t, http.MethodPost, ctl+"/sessions/"+sess.ID+"/refund", `{"amount":500}`)
	if refund.Type != "charge.refunded" || !reflect.DeepEqual(statuses(refund), []int{200}) ||
		refund.Deliveries[0].URL != recv.URL || refund.Deliveries[0].Attempt != 1 {
		t.Errorf("refund: %+v", refund)
	}
	var ev struct {
		Data struct {
			Object struct {
				AmountRefunded int64 `json:"amount_refunded"`
			} `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(refund.Payload, &ev); err != nil || ev.Data.Object.AmountRefunded != 500 {
		t.Errorf("refund event %s: %v", refund.Payload, err)
	}
	if dispute := controlEvent(t, http.MethodPost, ctl+"/sessions/"+sess.ID+"/dispute", ""); dispute.Type != "charge.dispute.created" {
		t.Errorf("dispute: %+v", dispute)
	}

	redelivered := controlEvent(t, http.MethodPost, ctl+"/events/"+paidEvent+"/redeliver", "")
	forged := controlEvent(t, http.MethodPost, ctl+"/events/"+paidEvent+"/send", `{"secret":"whsec_forged"}`)
	stale := controlEvent(t, http.MethodPost, ctl+"/events/"+paidEvent+"/send",
		fmt.Sprintf(`{"secret":%q,"timestamp":%d}`, testWebhookSecret, time.Now().Add(-time.Hour).Unix()))
	for _, tc := range []struct {
		name string
		rec  StripeEventRecord
		want []int
	}{
		{"redelivered", redelivered, []int{200, 200}},
		{"forged", forged, []int{200, 200, 400}},
		{"stale", stale, []int{200, 200, 400, 400}},
	} {
		if tc.rec.ID != paidEvent || !reflect.DeepEqual(statuses(tc.rec), tc.want) {
			t.Errorf("%s: %s delivered %v, want %s %v", tc.name, tc.rec.ID, statuses(tc.rec), paidEvent, tc.want)
		}
	}

	cust := newStripeCustomer(t, sc)
	sub := paidSubscription(t, sc, recv, cust.ID, "price_pro")
	subURL := ctl + "/subscriptions/" + sub.ID
	for _, tc := range []struct{ action, body, typ string }{
		{"update", `{"price":"price_team"}`, "customer.subscription.updated"},
		{"update", `{"at_period_end":true}`, "customer.subscription.updated"},
		{"fail-invoice", "", "invoice.payment_failed"},
		{"renew", "", "customer.subscription.deleted"}, // it was cancelling
	} {
		if rec := controlEvent(t, http.MethodPost, subURL+"/"+tc.action, tc.body); rec.Type != tc.typ {
			t.Errorf("%s %s: %s, want %s", tc.action, tc.body, rec.Type, tc.typ)
		}
	}

	_, data = call(t, http.MethodGet, ctl+"/events", "", "-")
	var list struct {
		Events []StripeEventRecord `json:"events"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range list.Events {
		types = append(types, e.Type)
	}
	if want := []string{"checkout.session.completed", "charge.refunded", "charge.dispute.created",
		"customer.subscription.created", "invoice.paid", "checkout.session.completed",
		"customer.subscription.updated", "customer.subscription.updated", "invoice.payment_failed",
		"customer.subscription.deleted"}; !reflect.DeepEqual(types, want) {
		t.Errorf("events %v,\nwant %v", types, want)
	}

	for _, tc := range []struct {
		method, path, body string
		status             int
	}{
		{http.MethodPost, "/sessions/cs_test_nope/refund", `{"amount":1}`, 404},
		{http.MethodPost, "/sessions/cs_test_nope/dispute", "", 404},
		{http.MethodPost, "/sessions/" + sess.ID + "/refund", `{"amount":5000}`, 400},
		{http.MethodPost, "/sessions/" + sess.ID + "/refund", `{"amount_cents":5}`, 400},
		{http.MethodPost, "/subscriptions/" + sub.ID + "/cancel", "", 400}, // already ended
		{http.MethodPost, "/subscriptions/sub_nope/renew", "", 404},
		{http.MethodGet, "/events/evt_nope", "", 404},
		{http.MethodPost, "/events/evt_nope/redeliver", "", 404},
		{http.MethodPut, "/webhook", `{"url":"ftp://x","secret":"s"}`, 400},
		{http.MethodPut, "/webhook", fmt.Sprintf(`{"url":%q}`, recv.URL), 400},
		{http.MethodPut, "/webhook", `not json`, 400},
		{http.MethodPut, "/prices/price_x", `{"unit_amount":0,"currency":"usd"}`, 400},
		{http.MethodPut, "/prices/plan_x", `{"unit_amount":100,"currency":"usd"}`, 400},
		{http.MethodPut, "/prices/price_x", `{"unit_amount":100,"currency":"usd","interval":"week"}`, 400},
	} {
		if resp, data := call(t, tc.method, ctl+tc.path, tc.body, "-"); resp.StatusCode != tc.status {
			t.Errorf("%s %s %s: %d %s, want %d", tc.method, tc.path, tc.body, resp.StatusCode, data, tc.status)
		}
	}

	_, data = call(t, http.MethodDelete, ctl+"/webhook?url="+recv.URL, "", "-")
	assertJSON(t, data, `{"webhooks":[]}`)
}
