package billing

import (
	"context"
	"fmt"
	"strings"

	"github.com/stripe/stripe-go/v82"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Checkout is a Checkout Session made for a buyer: where to send them.
type Checkout struct {
	SessionID string `json:"session_id"`
	URL       string `json:"url"`
}

// AmountError is a top-up the catalog does not sell; its message says what it does.
type AmountError struct{ Msg string }

func (e *AmountError) Error() string { return e.Msg }

// CreditCheckout makes a Stripe Checkout Session for cents of credits for acct. Nothing is
// granted here: the session's webhook does that once Stripe says it is paid. returnBase is
// the gateway's address as the buyer reaches it, for the default success and cancel pages.
func (s *Service) CreditCheckout(ctx context.Context, acct persistence.Account, cents int64, returnBase string) (Checkout, error) {
	cfg := s.config()
	if cfg == nil {
		return Checkout{}, ErrDisabled
	}
	if !cfg.AllowsCredit(cents) {
		return Checkout{}, &AmountError{Msg: "amount_usd must be " + offered(cfg)}
	}
	c, err := s.client(cfg)
	if err != nil {
		return Checkout{}, err
	}
	success := cfg.SuccessURL
	if success == "" {
		success = returnBase + "/dashboard/credits?session={CHECKOUT_SESSION_ID}"
	}
	cancel := cfg.CancelURL
	if cancel == "" {
		cancel = returnBase + "/dashboard/credits"
	}
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModePayment)),
		ClientReferenceID: stripe.String(acct.ID),
		SuccessURL:        stripe.String(success),
		CancelURL:         stripe.String(cancel),
		Metadata:          map[string]string{"modelgate_kind": kindCredits, "account_id": acct.ID},
		// The charge's own metadata: Stripe copies none of the session's onto it.
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{
			Metadata: map[string]string{"modelgate_kind": kindCredits, "account_id": acct.ID}},
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{
				Currency:    stripe.String(cfg.Currency),
				UnitAmount:  stripe.Int64(cents),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("Credits")},
			},
		}},
	}
	if acct.Email != "" {
		params.CustomerEmail = stripe.String(acct.Email)
	}
	ctx, cancelCtx := context.WithTimeout(ctx, stripeTimeout)
	defer cancelCtx()
	cs, err := c.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return Checkout{}, fmt.Errorf("stripe checkout: %w", err)
	}
	return Checkout{SessionID: cs.ID, URL: cs.URL}, nil
}

// offered says which top-ups the catalog sells.
func offered(cfg *catalog.Stripe) string {
	if len(cfg.CreditAmounts) > 0 {
		var list []string
		for _, c := range cfg.CreditAmounts {
			list = append(list, dollars(c))
		}
		return "one of " + strings.Join(list, ", ")
	}
	return "between " + dollars(cfg.MinCreditCents) + " and " + dollars(cfg.MaxCreditCents)
}

func dollars(cents int64) string { return fmt.Sprintf("%d.%02d", cents/100, cents%100) }

// Offer is what the credits page offers: fixed amounts, or any amount in a range.
type Offer struct {
	AmountsUSD []string `json:"amounts_usd,omitempty"`
	MinUSD     string   `json:"min_usd,omitempty"`
	MaxUSD     string   `json:"max_usd,omitempty"`
}

// CreditOffer is the credits on sale (nil when payments are off).
func (s *Service) CreditOffer() *Offer {
	cfg := s.config()
	if cfg == nil {
		return nil
	}
	if len(cfg.CreditAmounts) > 0 {
		o := &Offer{}
		for _, c := range cfg.CreditAmounts {
			o.AmountsUSD = append(o.AmountsUSD, dollars(c))
		}
		return o
	}
	return &Offer{MinUSD: dollars(cfg.MinCreditCents), MaxUSD: dollars(cfg.MaxCreditCents)}
}
