package billing

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

const testSecret = "whsec_test_modelgate"

// ledger is an in-memory quota owner's top-up: once per key, as the quota service does.
type ledger struct {
	mu      sync.Mutex
	grants  map[string]money.Amount
	balance money.Amount
	fail    int // the next fail calls fail (a transient error)
}

func (l *ledger) AddCredits(_ context.Context, _ string, amount money.Amount, key string) (money.Amount, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail > 0 {
		l.fail--
		return 0, false, errors.New("the account's owner is moving")
	}
	if _, ok := l.grants[key]; ok {
		return l.balance, false, nil
	}
	l.grants[key] = amount
	l.balance += amount
	return l.balance, true, nil
}

// ReverseCredits takes amount back once per key, below zero if need be, as the quota service does.
func (l *ledger) ReverseCredits(_ context.Context, _ string, amount money.Amount, key string) (money.Amount, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.grants[key]; ok {
		return l.balance, false, nil
	}
	l.grants[key] = -amount
	l.balance -= amount
	return l.balance, true, nil
}

type fixture struct {
	svc    *Service
	ledger *ledger
	store  *persistence.Store
	counts map[string]int
}

// payments is what the store recorded, in Stripe id order.
func (f *fixture) payments(t *testing.T) []persistence.Payment {
	t.Helper()
	ps, err := f.store.Payments()
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ps, func(a, b persistence.Payment) int { return strings.Compare(a.StripeID, b.StripeID) })
	return ps
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	t.Setenv("T_STRIPE_KEY", "sk_test_123")
	t.Setenv("T_STRIPE_WHSEC", testSecret)
	cat, err := catalog.Parse("f.yaml", []byte("models:\n  - {id: m, kind: chat, routes: [{id: r, format: chat, base_url: 'http://x'}]}\n"+
		"billing:\n  stripe: {secret_key_env: T_STRIPE_KEY, webhook_secret_env: T_STRIPE_WHSEC, credit_amounts: ['10.00', '25.00']}\n"))
	if err != nil {
		t.Fatal(err)
	}
	store, err := persistence.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	// acct_1, the account the events name, on the default plan.
	if err := store.UpdateMeta(func(b *persistence.MetaBatch) error {
		_, err := b.CreateAccount(persistence.NewAccount{Account: persistence.Account{ID: "acct_1", Email: "ada@example.com", Plan: "free"}, Order: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	f := &fixture{ledger: &ledger{grants: map[string]money.Amount{}}, store: store, counts: map[string]int{}}
	f.svc = New(Deps{Catalog: catalog.NewHolder(cat), Credits: f.ledger, Reverser: f.ledger, Store: store,
		Count: func(kind, outcome string) { f.counts[kind+"/"+outcome]++ }})
	return f
}

// event is a Stripe event of type typ whose data.object is obj.
func event(id, typ, obj string) []byte {
	return []byte(`{"id":"` + id + `","object":"event","api_version":"2020-08-27","created":1767225600,"type":"` + typ +
		`","livemode":false,"pending_webhooks":1,"data":{"object":` + obj + `}}`)
}

func paidSession(id, account string, cents int64) string {
	return `{"id":"` + id + `","object":"checkout.session","mode":"payment","payment_status":"paid","status":"complete","amount_total":` +
		strconv.FormatInt(cents, 10) + `,"currency":"usd","client_reference_id":"` + account + `","customer":"cus_1","payment_intent":"pi_` + id + `","metadata":{"modelgate_kind":"credits","account_id":"` + account + `"}}`
}

// deliver posts payload signed with secret at the time at, as Stripe does.
func (f *fixture) deliver(payload []byte, secret string, at time.Time) int {
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: at})
	req := httptest.NewRequest(http.MethodPost, WebhookPath, bytes.NewReader(payload))
	req.Header.Set("Stripe-Signature", signed.Header)
	rec := httptest.NewRecorder()
	f.svc.Webhook(rec, req)
	return rec.Code
}

func TestWebhookGrantsAPurchaseOnce(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	ev := event("evt_1", "checkout.session.completed", paidSession("cs_test_1", "acct_1", 2500))
	for i, e := range [][]byte{ev, ev, event("evt_2", "checkout.session.completed", paidSession("cs_test_1", "acct_1", 2500))} {
		if code := f.deliver(e, testSecret, now); code != http.StatusOK {
			t.Fatalf("delivery %d: %d, want 200", i, code)
		}
	}
	if want := catalog.CentsToCredits(2500); f.ledger.balance != want || len(f.ledger.grants) != 1 || f.ledger.grants["stripe:cs_test_1"] != want {
		t.Errorf("balance %s, grants %v; want one grant of %s under stripe:cs_test_1", f.ledger.balance, f.ledger.grants, want)
	}
	if ps := f.payments(t); len(ps) != 1 || ps[0].EventID != "evt_1" || ps[0].Cents != 2500 || ps[0].Customer != "cus_1" {
		t.Errorf("payments %+v, want one record of evt_1", ps)
	}
	if f.counts["credits/granted"] != 1 || f.counts["credits/repeated"] != 2 {
		t.Errorf("counts %v, want 1 granted and 2 repeated", f.counts)
	}
}

func TestWebhookRefusesWhatItCannotTrust(t *testing.T) {
	now := time.Now()
	paid := event("evt_1", "checkout.session.completed", paidSession("cs_test_1", "acct_1", 1000))
	cases := []struct {
		name    string
		payload []byte
		secret  string
		at      time.Time
		code    int
	}{
		{"a forged signature", paid, "whsec_someone_else", now, http.StatusBadRequest},
		{"a stale timestamp (a replay)", paid, testSecret, now.Add(-6 * time.Minute), http.StatusBadRequest},
		{"a body changed after signing", nil, testSecret, now, http.StatusBadRequest},
		{"an event type it does not act on", event("evt_3", "customer.created", `{"id":"cus_1"}`), testSecret, now, http.StatusOK},
		{"a session this gateway did not make", event("evt_4", "checkout.session.completed", strings.Replace(paidSession("cs_other", "acct_1", 1000), `"modelgate_kind":"credits",`, "", 1)), testSecret, now, http.StatusOK},
		{"an unpaid session (its async payment is pending)", event("evt_5", "checkout.session.completed", strings.Replace(paidSession("cs_async", "acct_1", 1000), `"paid"`, `"unpaid"`, 1)), testSecret, now, http.StatusOK},
		{"an unknown account", event("evt_6", "checkout.session.completed", paidSession("cs_test_9", "acct_gone", 1000)), testSecret, now, http.StatusOK},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			var code int
			if c.payload == nil { // signed one body, sent another
				signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: paid, Secret: testSecret, Timestamp: now})
				req := httptest.NewRequest(http.MethodPost, WebhookPath, strings.NewReader(strings.Replace(string(paid), "1000", "100000", 1)))
				req.Header.Set("Stripe-Signature", signed.Header)
				rec := httptest.NewRecorder()
				f.svc.Webhook(rec, req)
				code = rec.Code
			} else {
				code = f.deliver(c.payload, c.secret, c.at)
			}
			if code != c.code {
				t.Errorf("status %d, want %d", code, c.code)
			}
			if ps := f.payments(t); len(f.ledger.grants) != 0 || len(ps) != 0 {
				t.Errorf("granted %v, recorded %v; want nothing", f.ledger.grants, ps)
			}
		})
	}
}

// Without its secret (the variable emptied after the load) nothing verifies, not even an
// event signed with the empty secret anyone can compute: 503, and Stripe retries later.
func TestWebhookWithoutItsSecretVerifiesNothing(t *testing.T) {
	f := newFixture(t)
	t.Setenv("T_STRIPE_WHSEC", "")
	ev := event("evt_1", "checkout.session.completed", paidSession("cs_test_1", "acct_1", 1000))
	if code := f.deliver(ev, "", time.Now()); code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", code)
	}
	if len(f.ledger.grants) != 0 {
		t.Errorf("granted %v", f.ledger.grants)
	}
}

// A grant that fails on the gateway's side is a 500: Stripe retries, and the retry grants.
func TestWebhookRetriedAfterAFailureGrantsOnce(t *testing.T) {
	f := newFixture(t)
	f.ledger.fail = 1
	ev := event("evt_1", "checkout.session.completed", paidSession("cs_test_1", "acct_1", 1000))
	if code := f.deliver(ev, testSecret, time.Now()); code != http.StatusInternalServerError {
		t.Fatalf("first delivery: %d, want 500", code)
	}
	if code := f.deliver(ev, testSecret, time.Now()); code != http.StatusOK {
		t.Fatalf("retry: %d, want 200", code)
	}
	if ps := f.payments(t); len(f.ledger.grants) != 1 || len(ps) != 1 || f.counts["credits/failed"] != 1 || f.counts["credits/granted"] != 1 {
		t.Errorf("grants %v, payments %d, counts %v", f.ledger.grants, len(ps), f.counts)
	}
}

// eventWith is event with data.previous_attributes.
func eventWith(id, typ, obj, prev string) []byte {
	e := event(id, typ, obj)
	return []byte(strings.Replace(string(e), `"data":{"object":`+obj+`}`, `"data":{"object":`+obj+`,"previous_attributes":`+prev+`}`, 1))
}

func refundedCharge(pi string, refunded int64) string {
	return `{"id":"ch_1","object":"charge","amount":2500,"amount_refunded":` + strconv.FormatInt(refunded, 10) + `,"currency":"usd","payment_intent":"` + pi + `","metadata":{}}`
}

// Refunds take back exactly what each refund adds, once per refund whatever the retries; the
// balance may go below zero (what was spent stays spent); a dispute takes its amount back.
func TestRefundsAndDisputesTakeCreditsBack(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	steps := []struct {
		name    string
		payload []byte
		balance string
	}{
		{"a purchase of 25.00", event("evt_1", "checkout.session.completed", paidSession("cs_test_1", "acct_1", 2500)), "25"},
		{"a first refund of 10.00", eventWith("evt_2", "charge.refunded", refundedCharge("pi_cs_test_1", 1000), `{"amount_refunded":0}`), "15"},
		{"the same event again", eventWith("evt_2", "charge.refunded", refundedCharge("pi_cs_test_1", 1000), `{"amount_refunded":0}`), "15"},
		{"the rest, 15.00", eventWith("evt_3", "charge.refunded", refundedCharge("pi_cs_test_1", 2500), `{"amount_refunded":1000,"refunded":false}`), "0"},
		{"a refund of a payment made elsewhere", eventWith("evt_4", "charge.refunded", refundedCharge("pi_other", 500), `{"amount_refunded":0}`), "0"},
		{"a purchase of 10.00", event("evt_5", "checkout.session.completed", paidSession("cs_test_2", "acct_1", 1000)), "10"},
		{"its dispute, after 4.00 were spent", event("evt_6", "charge.dispute.created", `{"id":"dp_1","object":"dispute","amount":1000,"currency":"usd","payment_intent":"pi_cs_test_2","charge":"ch_2"}`), "-4"},
	}
	for _, st := range steps {
		if st.name == "its dispute, after 4.00 were spent" {
			f.ledger.balance -= catalog.CentsToCredits(400)
		}
		if code := f.deliver(st.payload, testSecret, now); code != http.StatusOK {
			t.Fatalf("%s: %d, want 200", st.name, code)
		}
		if got := f.ledger.balance.String(); got != st.balance {
			t.Fatalf("%s: balance %s, want %s", st.name, got, st.balance)
		}
	}
	if f.counts["refund/reversed"] != 3 || f.counts["refund/repeated"] != 1 || f.counts["refund/ignored"] != 1 {
		t.Errorf("counts %v", f.counts)
	}
	var reversed []string
	for _, p := range f.payments(t) {
		if p.Kind == persistence.PaymentRefund {
			reversed = append(reversed, p.StripeID+" "+money.Amount(p.Amount).String())
		}
	}
	if got := strings.Join(reversed, ", "); got != "ch_1@1000 -10, ch_1@2500 -15, dp_1 -10" {
		t.Errorf("refund records: %s", got)
	}
}
