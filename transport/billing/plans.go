package billing

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Buying and changing plans. An account without a live subscription subscribes through a
// Checkout Session in subscription mode; one with a live subscription changes its price (an
// upgrade invoiced at once, prorated; a downgrade from the next renewal, as the plan held
// is paid to the period's end). Either way the plan moves only with Stripe's events
// (subscriptions.go), never from this call or the buyer's way back.

// PlanError is a plan change the gateway refuses; its message says why.
type PlanError struct{ Msg string }

func (e *PlanError) Error() string { return e.Msg }

// PlanChange is what a plan purchase started: a checkout to send the buyer to (SessionID and
// URL), or a change of the live subscription that Stripe confirms by webhook (Subscription).
type PlanChange struct {
	SessionID    string `json:"session_id,omitempty"`
	URL          string `json:"url,omitempty"`
	Subscription string `json:"subscription,omitempty"`
}

// live reports whether sub still bills (a change updates it rather than buying anew).
func live(sub persistence.Subscription) bool {
	switch stripe.SubscriptionStatus(sub.Status) {
	case stripe.SubscriptionStatusCanceled, stripe.SubscriptionStatusIncompleteExpired, "":
		return false
	}
	return true
}

// PlanCheckout starts the purchase of plan name for acct. returnBase is the gateway's
// address as the buyer reaches it.
func (s *Service) PlanCheckout(ctx context.Context, acct persistence.Account, name, returnBase string) (PlanChange, error) {
	cfg := s.config()
	if cfg == nil {
		return PlanChange{}, ErrDisabled
	}
	plan, ok := s.d.Catalog.Load().Plan(name)
	if !ok || plan.StripePrice == "" {
		return PlanChange{}, &PlanError{Msg: fmt.Sprintf("plan %q is not sold here", name)}
	}
	sub, err := s.d.Store.Subscription(acct.ID)
	if err != nil && !errors.Is(err, persistence.ErrNotFound) {
		return PlanChange{}, err
	}
	c, err := s.client(cfg)
	if err != nil {
		return PlanChange{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, stripeTimeout)
	defer cancel()
	switch {
	case live(sub) && sub.Item == "": // known from its invoice only, so far
		return PlanChange{}, &PlanError{Msg: "the subscription is still being confirmed by the payment provider; try again in a moment"}
	case live(sub):
		return s.changeSubscription(ctx, c, acct, sub, plan)
	}
	if acct.PlanAt(time.Now().Unix()) == plan.Name {
		return PlanChange{}, &PlanError{Msg: "the account is on plan " + plan.Name + " already"}
	}
	md := map[string]string{"modelgate_kind": kindPlan, "account_id": acct.ID}
	params := &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String(string(stripe.CheckoutSessionModeSubscription)),
		ClientReferenceID: stripe.String(acct.ID),
		SuccessURL:        stripe.String(cmp.Or(cfg.SuccessURL, returnBase+"/dashboard/plan?session={CHECKOUT_SESSION_ID}")),
		CancelURL:         stripe.String(cmp.Or(cfg.CancelURL, returnBase+"/dashboard/plan")),
		Metadata:          md,
		// The subscription's own metadata, which its events and invoices carry.
		SubscriptionData: &stripe.CheckoutSessionCreateSubscriptionDataParams{Metadata: md},
		LineItems:        []*stripe.CheckoutSessionCreateLineItemParams{{Price: stripe.String(plan.StripePrice), Quantity: stripe.Int64(1)}},
	}
	switch {
	case sub.Customer != "": // a returning subscriber keeps one customer, so one portal shows all
		params.Customer = stripe.String(sub.Customer)
	case acct.Email != "":
		params.CustomerEmail = stripe.String(acct.Email)
	}
	cs, err := c.V1CheckoutSessions.Create(ctx, params)
	if err != nil {
		return PlanChange{}, fmt.Errorf("stripe checkout: %w", err)
	}
	return PlanChange{SessionID: cs.ID, URL: cs.URL}, nil
}

// changeSubscription moves the live subscription sub to plan's price.
func (s *Service) changeSubscription(ctx context.Context, c *stripe.Client, acct persistence.Account, sub persistence.Subscription, plan *catalog.Plan) (PlanChange, error) {
	if sub.Price == plan.StripePrice && !sub.CancelAtPeriodEnd {
		return PlanChange{}, &PlanError{Msg: "the subscription is to plan " + plan.Name + " already"}
	}
	// An upgrade is paid now (the difference for the rest of the period); a downgrade is
	// billed from the next renewal, the plan held being paid until then.
	proration := "none"
	if atLeast(s.d.Catalog.Load(), plan.Name, acct.PlanAt(time.Now().Unix())) {
		proration = "always_invoice"
	}
	params := &stripe.SubscriptionUpdateParams{
		Items:             []*stripe.SubscriptionUpdateItemParams{{ID: stripe.String(sub.Item), Price: stripe.String(plan.StripePrice)}},
		ProrationBehavior: stripe.String(proration),
		CancelAtPeriodEnd: stripe.Bool(false), // choosing a plan resumes a subscription set to end
	}
	if sub.Price == plan.StripePrice {
		params.Items, params.ProrationBehavior = nil, nil
	}
	updated, err := c.V1Subscriptions.Update(ctx, sub.ID, params)
	if err != nil {
		return PlanChange{}, fmt.Errorf("stripe subscription update: %w", err)
	}
	return PlanChange{Subscription: updated.ID}, nil
}

// Portal makes a Stripe billing portal session for acct's customer, where the subscriber
// manages payment methods, invoices and cancellation; ErrNoCustomer when it never subscribed.
func (s *Service) Portal(ctx context.Context, acct persistence.Account, returnBase string) (string, error) {
	cfg := s.config()
	if cfg == nil {
		return "", ErrDisabled
	}
	sub, err := s.d.Store.Subscription(acct.ID)
	switch {
	case errors.Is(err, persistence.ErrNotFound) || (err == nil && sub.Customer == ""):
		return "", ErrNoCustomer
	case err != nil:
		return "", err
	}
	c, err := s.client(cfg)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, stripeTimeout)
	defer cancel()
	ps, err := c.V1BillingPortalSessions.Create(ctx, &stripe.BillingPortalSessionCreateParams{
		Customer: stripe.String(sub.Customer), ReturnURL: stripe.String(returnBase + "/dashboard/plan")})
	if err != nil {
		return "", fmt.Errorf("stripe billing portal: %w", err)
	}
	return ps.URL, nil
}

// ErrNoCustomer is a portal asked for by an account that never subscribed.
var ErrNoCustomer = errors.New("the account has no Stripe customer: it never subscribed")

// PlanView is the account's plan as the dashboard shows it.
type PlanView struct {
	Plan       string `json:"plan"`
	NextPlan   string `json:"next_plan,omitempty"`
	NextPlanAt string `json:"next_plan_at,omitempty"` // RFC 3339
	// Subscription is the account's Stripe subscription, if it ever had one.
	Subscription *SubscriptionView `json:"subscription,omitempty"`
	// Plans are the plans on sale, from the one allowing least (none: payments are off).
	Plans []PlanOffer `json:"plans"`
}

// SubscriptionView is a subscription as its holder sees it.
type SubscriptionView struct {
	ID                string `json:"id"`
	Plan              string `json:"plan"`
	Status            string `json:"status"`
	CurrentPeriodEnd  string `json:"current_period_end"` // the next renewal, or the end when set to cancel
	CancelAtPeriodEnd bool   `json:"cancel_at_period_end"`
}

// PlanOffer is one plan on sale and its limits (0: unlimited).
type PlanOffer struct {
	Name           string `json:"name"`
	WindowRequests int64  `json:"window_requests"`
	WindowSeconds  int64  `json:"window_seconds"`
	WeeklyRequests int64  `json:"weekly_requests"`
	BurstRPM       int64  `json:"burst_rpm"`
}

// PlanState is acct's plan, its subscription and the plans on sale.
func (s *Service) PlanState(acct persistence.Account) (PlanView, error) {
	now := time.Now()
	v := PlanView{Plan: acct.PlanAt(now.Unix()), Plans: []PlanOffer{}}
	if acct.NextPlan != "" && acct.NextPlanAt > now.Unix() {
		v.NextPlan, v.NextPlanAt = acct.NextPlan, rfc3339(acct.NextPlanAt)
	}
	if s.config() == nil {
		return v, nil
	}
	for _, p := range s.d.Catalog.Load().PurchasablePlans() {
		v.Plans = append(v.Plans, PlanOffer{Name: p.Name, WindowRequests: p.WindowRequests, WindowSeconds: int64(p.Window / time.Second),
			WeeklyRequests: p.WeeklyRequests, BurstRPM: p.BurstRPM})
	}
	sub, err := s.d.Store.Subscription(acct.ID)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
	case err != nil:
		return v, err
	default:
		v.Subscription = &SubscriptionView{ID: sub.ID, Plan: sub.Plan, Status: sub.Status,
			CurrentPeriodEnd: rfc3339(sub.PeriodEnd), CancelAtPeriodEnd: sub.CancelAtPeriodEnd}
	}
	return v, nil
}

func rfc3339(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }
