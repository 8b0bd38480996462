package persistence

import (
	"errors"
	"testing"
)

func TestRecordPaymentOncePerStripeID(t *testing.T) {
	s, _ := openStore(t)
	first := Payment{StripeID: "cs_test_1", EventID: "evt_1", Kind: PaymentCredits, Outcome: GrantedOutcome, Account: "acct_1", Amount: 25_000_000_000_000, Cents: 2500, PaymentIntent: "pi_1", At: 100}
	later := Payment{StripeID: "cs_test_2", EventID: "evt_2", Kind: PaymentCredits, Outcome: GrantedOutcome, Account: "acct_1", Amount: 10_000_000_000_000, Cents: 1000, At: 200}
	for i, c := range []struct {
		p    Payment
		want bool
	}{{first, true}, {Payment{StripeID: "cs_test_1", EventID: "evt_9", Kind: PaymentCredits, Account: "acct_1", At: 300}, false}, {later, true}} {
		got, err := s.RecordPayment(c.p)
		if err != nil || got != c.want {
			t.Fatalf("record %d: %v, %v; want %v", i, got, err, c.want)
		}
	}
	ps, err := s.Payments()
	if err != nil || len(ps) != 2 || ps[0] != later || ps[1] != first {
		t.Fatalf("payments %+v, %v; want the later first, the first record of cs_test_1 kept", ps, err)
	}
	if p, err := s.PaymentByIntent("pi_1"); err != nil || p != first {
		t.Errorf("by intent: %+v, %v; want the first purchase", p, err)
	}
	if _, err := s.PaymentByIntent("pi_unknown"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown intent: %v, want ErrNotFound", err)
	}
	for _, bad := range []Payment{{StripeID: "", Kind: PaymentCredits, Account: "a"}, {StripeID: "cs/1", Kind: PaymentCredits, Account: "a"},
		{StripeID: "cs_1", Kind: "gift", Account: "a"}, {StripeID: "cs_1", Kind: PaymentCredits}} {
		if _, err := s.RecordPayment(bad); err == nil {
			t.Errorf("%+v was recorded", bad)
		}
	}
}
