package billing

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

const plansCatalog = "models:\n  - {id: m, kind: chat, routes: [{id: r, format: chat, base_url: 'http://x'}]}\n" +
	"plans:\n  - {name: free, window_requests: 10}\n  - {name: basic, window_requests: 100, stripe_price: price_basic}\n" +
	"  - {name: pro, window_requests: 1000, stripe_price: price_pro}\n" +
	"billing:\n  stripe: {secret_key_env: T_STRIPE_KEY, webhook_secret_env: T_STRIPE_WHSEC}\n"

// subscriptionFixture is a fixture selling basic and pro.
func subscriptionFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t)
	cat, err := catalog.Parse("f.yaml", []byte(plansCatalog))
	if err != nil {
		t.Fatal(err)
	}
	f.svc.d.Catalog.Store(cat)
	return f
}

// stripeEvent is a Stripe event created at created whose data.object is obj.
func stripeEvent(id, typ string, created int64, obj string) []byte {
	return []byte(`{"id":"` + id + `","object":"event","api_version":"2025-08-27.basil","created":` + strconv.FormatInt(created, 10) +
		`,"type":"` + typ + `","livemode":false,"pending_webhooks":1,"data":{"object":` + obj + `}}`)
}

// subState is a subscription as the basil API renders it: its period on its item.
type subState struct {
	id, status, price string
	start, end, ended int64
	cancel            bool
}

func (s subState) json() string {
	ended := "null"
	if s.ended > 0 {
		ended = strconv.FormatInt(s.ended, 10)
	}
	return `{"id":"` + s.id + `","object":"subscription","customer":"cus_1","status":"` + s.status + `","cancel_at_period_end":` +
		strconv.FormatBool(s.cancel) + `,"ended_at":` + ended + `,"metadata":{"modelgate_kind":"plan","account_id":"acct_1"},` +
		`"items":{"object":"list","data":[{"id":"si_1","object":"subscription_item","current_period_start":` + strconv.FormatInt(s.start, 10) +
		`,"current_period_end":` + strconv.FormatInt(s.end, 10) + `,"price":{"id":"` + s.price + `","object":"price"}}]}}`
}

// invoice is a subscription's invoice whose one line pays price for [start, end).
func invoice(id, sub, reason, price string, start, end int64) string {
	return `{"id":"` + id + `","object":"invoice","customer":"cus_1","billing_reason":"` + reason + `","parent":{"type":"subscription_details",` +
		`"subscription_details":{"subscription":"` + sub + `","metadata":{"modelgate_kind":"plan","account_id":"acct_1"}}},` +
		`"lines":{"object":"list","data":[{"id":"il_1","object":"line_item","period":{"start":` + strconv.FormatInt(start, 10) + `,"end":` +
		strconv.FormatInt(end, 10) + `},"pricing":{"type":"price_details","price_details":{"price":"` + price + `"}}}]}}`
}

// A subscription's life moves its account between plans: a purchase and an upgrade at once,
// a downgrade and a cancellation when the paid period ends (the renewal that shows Stripe's
// clock past it, or this node's clock), whatever the redeliveries and late events.
func TestSubscriptionEventsMoveTheAccountBetweenPlans(t *testing.T) {
	f := subscriptionFixture(t)
	now := time.Now().Unix()
	t0, t1 := now-60, now+30*86400
	t2 := t1 + 30*86400
	basic := subState{id: "sub_1", status: "active", price: "price_basic", start: t0, end: t1}
	pro := basic
	pro.price = "price_pro"
	back := basic // to basic, in the same period
	cancelling := basic
	cancelling.start, cancelling.end, cancelling.cancel = t1, t2, true
	ended := cancelling
	ended.status, ended.ended = "canceled", t2
	type want struct {
		plan, next string
		at         int64
	}
	steps := []struct {
		name    string
		payload []byte
		want    want
		outcome string
	}{
		{"the subscription is created", stripeEvent("evt_1", "customer.subscription.created", now-50, basic.json()), want{"basic", "", 0}, "plan/upgraded"},
		{"its first invoice is paid", stripeEvent("evt_2", "invoice.paid", now-50, invoice("in_1", "sub_1", "subscription_create", "price_basic", t0, t1)), want{"basic", "", 0}, "plan/unchanged"},
		{"the same event again", stripeEvent("evt_2", "invoice.paid", now-50, invoice("in_1", "sub_1", "subscription_create", "price_basic", t0, t1)), want{"basic", "", 0}, "plan/repeated"},
		{"an upgrade to pro", stripeEvent("evt_3", "customer.subscription.updated", now-40, pro.json()), want{"pro", "", 0}, "plan/upgraded"},
		{"a downgrade to basic waits for the period's end", stripeEvent("evt_4", "customer.subscription.updated", now-30, back.json()), want{"pro", "basic", t1}, "plan/scheduled"},
		{"a late event older than the downgrade", stripeEvent("evt_5", "customer.subscription.updated", now-35, pro.json()), want{"pro", "basic", t1}, "plan/stale"},
		{"the renewal at the period's end applies it", stripeEvent("evt_6", "invoice.paid", now-20, invoice("in_2", "sub_1", "subscription_cycle", "price_basic", t1, t2)), want{"basic", "", 0}, "plan/downgraded"},
		{"a cancellation at the period's end", stripeEvent("evt_7", "customer.subscription.updated", now-10, cancelling.json()), want{"basic", "free", t2}, "plan/scheduled"},
		{"the subscription ends with its period", stripeEvent("evt_8", "customer.subscription.deleted", now-5, ended.json()), want{"free", "", 0}, "plan/ended"},
	}
	for _, st := range steps {
		before := f.counts[st.outcome]
		if code := f.deliver(st.payload, testSecret, time.Now()); code != 200 {
			t.Fatalf("%s: %d, want 200", st.name, code)
		}
		a, err := f.store.GetAccount("acct_1")
		if err != nil {
			t.Fatal(err)
		}
		if got := (want{a.Plan, a.NextPlan, a.NextPlanAt}); got != st.want {
			t.Fatalf("%s: plan %+v, want %+v", st.name, got, st.want)
		}
		if f.counts[st.outcome] != before+1 {
			t.Fatalf("%s: counted %v, want one more %s", st.name, f.counts, st.outcome)
		}
	}
	sub, err := f.store.Subscription("acct_1")
	if err != nil || sub.Status != "canceled" || sub.PaidThrough != t2 || sub.Customer != "cus_1" || sub.Plan != "basic" {
		t.Errorf("subscription %+v, %v", sub, err)
	}
	var records []string
	for _, p := range f.payments(t) {
		records = append(records, p.StripeID+" "+p.Outcome+" "+p.Plan)
	}
	if got := strings.Join(records, ", "); got != "evt_1 upgraded basic, evt_2 unchanged basic, evt_3 upgraded pro, evt_4 scheduled pro, evt_6 downgraded basic, evt_7 scheduled basic, evt_8 ended free" {
		t.Errorf("records: %s", got)
	}
}

// A renewal that is not paid leaves the paid plan when the period paid for ends; paying the
// invoice later brings it back. A subscription cancelled at once keeps what was paid for.
func TestSubscriptionPaymentsDecideHowLongAPlanLasts(t *testing.T) {
	now := time.Now().Unix()
	t0, t1 := now-60, now+30*86400
	t2 := t1 + 30*86400
	active := subState{id: "sub_1", status: "active", price: "price_pro", start: t0, end: t1}
	cancelledNow := active
	cancelledNow.status, cancelledNow.ended = "canceled", now
	type want struct {
		plan, next string
		at         int64
	}
	cases := []struct {
		name   string
		events [][]byte
		want   want
	}{
		{"a failed renewal ends the plan at the period's end",
			[][]byte{stripeEvent("evt_1", "customer.subscription.created", now-50, active.json()),
				stripeEvent("evt_2", "invoice.payment_failed", now-40, invoice("in_2", "sub_1", "subscription_cycle", "price_pro", t1, t2))},
			want{"free", "", 0}},
		{"the retried renewal paid brings it back",
			[][]byte{stripeEvent("evt_1", "customer.subscription.created", now-50, active.json()),
				stripeEvent("evt_2", "invoice.payment_failed", now-40, invoice("in_2", "sub_1", "subscription_cycle", "price_pro", t1, t2)),
				stripeEvent("evt_3", "invoice.paid", now-30, invoice("in_2", "sub_1", "subscription_cycle", "price_pro", t1, t2))},
			want{"pro", "", 0}},
		{"a first payment that fails buys nothing",
			[][]byte{stripeEvent("evt_1", "invoice.payment_failed", now-40, invoice("in_1", "sub_1", "subscription_create", "price_pro", t0, t1))},
			want{"free", "", 0}},
		{"the invoice before its subscription's event",
			[][]byte{stripeEvent("evt_1", "invoice.paid", now-50, invoice("in_1", "sub_1", "subscription_create", "price_pro", t0, t1)),
				stripeEvent("evt_2", "customer.subscription.created", now-50, active.json())},
			want{"pro", "", 0}},
		{"cancelled at once: paid to the period's end",
			[][]byte{stripeEvent("evt_1", "customer.subscription.created", now-50, active.json()),
				stripeEvent("evt_2", "customer.subscription.deleted", now-40, cancelledNow.json())},
			want{"pro", "free", t1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := subscriptionFixture(t)
			for i, ev := range c.events {
				if code := f.deliver(ev, testSecret, time.Now()); code != 200 {
					t.Fatalf("event %d: %d", i, code)
				}
			}
			a, err := f.store.GetAccount("acct_1")
			if err != nil {
				t.Fatal(err)
			}
			if got := (want{a.Plan, a.NextPlan, a.NextPlanAt}); got != c.want {
				t.Errorf("plan %+v, want %+v", got, c.want)
			}
		})
	}
}

// Events this gateway must not act on change nothing.
func TestSubscriptionEventsItDoesNotOwnChangeNothing(t *testing.T) {
	now := time.Now().Unix()
	other := subState{id: "sub_1", status: "active", price: "price_gold", start: now, end: now + 86400}
	cases := []struct {
		name    string
		payload []byte
		counted string
	}{
		{"a price no plan sells", stripeEvent("evt_1", "customer.subscription.created", now, other.json()), "plan/refused"},
		{"a subscription the gateway did not sell", stripeEvent("evt_2", "customer.subscription.created", now,
			strings.Replace(subState{id: "sub_2", status: "active", price: "price_pro", start: now, end: now + 86400}.json(), `"modelgate_kind":"plan",`, "", 1)), "ignored/ignored"},
		{"an invoice of no subscription", stripeEvent("evt_3", "invoice.paid", now, `{"id":"in_9","object":"invoice","customer":"cus_1","lines":{"data":[]}}`), "ignored/ignored"},
		{"an unknown account", stripeEvent("evt_4", "customer.subscription.created", now,
			strings.Replace(subState{id: "sub_3", status: "active", price: "price_pro", start: now, end: now + 86400}.json(), "acct_1", "acct_gone", 1)), "plan/refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := subscriptionFixture(t)
			if code := f.deliver(c.payload, testSecret, time.Now()); code != 200 {
				t.Fatalf("status %d", code)
			}
			a, _ := f.store.GetAccount("acct_1")
			if _, err := f.store.Subscription("acct_1"); a.Plan != "free" || a.NextPlan != "" || err == nil || len(f.payments(t)) != 0 {
				t.Errorf("plan %q next %q, subscription err %v, records %d: want nothing changed", a.Plan, a.NextPlan, err, len(f.payments(t)))
			}
			if f.counts[c.counted] != 1 {
				t.Errorf("counts %v, want %s", f.counts, c.counted)
			}
		})
	}
}

// interleaving is a store that runs between, once, after an event was decided and before its
// write: another event applied in between, as two webhooks at once would.
type interleaving struct {
	*persistence.Store
	between func()
}

func (s *interleaving) ApplySubscription(c persistence.SubscriptionChange) (persistence.Account, bool, error) {
	if f := s.between; f != nil {
		s.between = nil
		f()
	}
	return s.Store.ApplySubscription(c)
}

// Two events decided on the same subscription at once both count: the one written second
// was decided on what the first wrote, never on what was there before it.
func TestSubscriptionEventsAtOnceBothApply(t *testing.T) {
	f := subscriptionFixture(t)
	now := time.Now().Unix()
	t0, t1 := now-60, now+30*86400
	t2 := t1 + 30*86400
	active := subState{id: "sub_1", status: "active", price: "price_pro", start: t0, end: t1}
	if code := f.deliver(stripeEvent("evt_1", "customer.subscription.created", now-50, active.json()), testSecret, time.Now()); code != 200 {
		t.Fatal(code)
	}
	store := &interleaving{Store: f.store}
	f.svc.d.Store = store
	cancelling := active
	cancelling.cancel = true
	store.between = func() {
		if code := f.deliver(stripeEvent("evt_2", "customer.subscription.updated", now-40, cancelling.json()), testSecret, time.Now()); code != 200 {
			t.Errorf("the cancellation: %d", code)
		}
	}
	// The next period paid ahead, while the cancellation is applied.
	if code := f.deliver(stripeEvent("evt_3", "invoice.paid", now-30, invoice("in_2", "sub_1", "subscription_cycle", "price_pro", t0, t2)), testSecret, time.Now()); code != 200 {
		t.Fatal(code)
	}
	sub, err := f.store.Subscription("acct_1")
	if err != nil || !sub.CancelAtPeriodEnd || sub.PaidThrough != t2 || sub.Rev != 3 {
		t.Errorf("subscription %+v, %v: want the cancellation and the payment to %d, 3 changes", sub, err, t2)
	}
	if a, _ := f.store.GetAccount("acct_1"); a.Plan != "pro" || a.NextPlan != "free" || a.NextPlanAt != t2 {
		t.Errorf("plan %s, then %s at %d; want pro, then free at %d", a.Plan, a.NextPlan, a.NextPlanAt, t2)
	}
}
