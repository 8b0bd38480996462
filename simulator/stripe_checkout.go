package simulator

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// Stripe's limits on what a Checkout Session takes, which also bound what a request can
// make the fake keep.
const (
	maxLineItems       = 100 // line items of one session
	maxQuantity        = 999_999
	maxUnitAmount      = 99_999_999 // in the smallest unit: $999,999.99
	maxStripeString    = 5000       // URLs, emails, names
	maxClientReference = 200        // client_reference_id
)

// sessionLifetime is how long a Checkout Session stays open, as Stripe's default (24 hours);
// the fake renders expires_at but does not expire sessions.
const sessionLifetime = 24 * time.Hour

// stripeSession is a Checkout Session with what it was created with and what its payment made.
type stripeSession struct {
	obj   sessionObject
	lines []checkoutLine
	// paymentMetadata is payment_intent_data[metadata], the charge's metadata; nil when not
	// sent, and the charge then carries the session's metadata instead.
	paymentMetadata      map[string]string
	subscriptionMetadata map[string]string // subscription_data[metadata]
	charge               *chargeObject     // the payment, once paid
}

// checkoutLine is one line item: a one-off price_data, or a subscription price.
type checkoutLine struct {
	name       string
	price      *priceObject // subscription mode only
	unitAmount int64
	quantity   int64
	currency   string
}

// createCheckoutSession answers POST /v1/checkout/sessions.
func (s *Server) createCheckoutSession(c *stripeCall) (any, *apiError) {
	f := c.form
	mode := stripe.CheckoutSessionMode(f.Get("mode"))
	switch mode {
	case stripe.CheckoutSessionModePayment, stripe.CheckoutSessionModeSubscription:
	case "":
		return nil, stripeMissing("mode")
	case stripe.CheckoutSessionModeSetup:
		return nil, stripeInvalid("mode", "", "The simulator does not serve setup mode: use payment or subscription.")
	default:
		return nil, stripeInvalid("mode", "", "Invalid mode: must be one of payment, setup, or subscription")
	}
	if f.Get("success_url") == "" {
		return nil, stripeMissing("success_url")
	}
	strs := map[string]string{}
	for _, p := range []struct {
		param string
		max   int
	}{{"success_url", maxStripeString}, {"cancel_url", maxStripeString}, {"customer", maxStripeString},
		{"customer_email", maxStripeString}, {"client_reference_id", maxClientReference}} {
		v, e := formString(f, p.param, p.max)
		if e != nil {
			return nil, e
		}
		strs[p.param] = v
	}
	for _, p := range []string{"success_url", "cancel_url"} {
		if _, e := formURL(f, p); e != nil {
			return nil, e
		}
	}
	customer, email := strs["customer"], strs["customer_email"]
	if customer != "" && email != "" {
		return nil, stripeInvalid("customer", "", "You may only specify one of these parameters: customer, customer_email.")
	}
	if _, ok := s.stripe.customers.get(customer); customer != "" && !ok {
		return nil, stripeNoSuch(http.StatusBadRequest, "customer", "customer", customer)
	}
	if mode != stripe.CheckoutSessionModePayment && hasParam(f, "payment_intent_data") {
		return nil, stripeInvalid("payment_intent_data", "", fmt.Sprintf("You can not pass `payment_intent_data` in `%s` mode.", mode))
	}
	if mode != stripe.CheckoutSessionModeSubscription && hasParam(f, "subscription_data") {
		return nil, stripeInvalid("subscription_data", "", fmt.Sprintf("You can not pass `subscription_data` in `%s` mode.", mode))
	}
	lines, e := s.checkoutLines(f, mode)
	if e != nil {
		return nil, e
	}
	md, e := formMetadata(f, "metadata")
	if e != nil {
		return nil, e
	}
	subMD, e := formMetadata(f, "subscription_data[metadata]")
	if e != nil {
		return nil, e
	}
	var payMD map[string]string
	if hasParam(f, "payment_intent_data[metadata]") {
		if payMD, e = formMetadata(f, "payment_intent_data[metadata]"); e != nil {
			return nil, e
		}
	}
	var total int64
	for _, l := range lines {
		total += l.unitAmount * l.quantity
	}
	now := time.Now()
	id := s.newID("cs_test_")
	sess := &stripeSession{lines: lines, paymentMetadata: payMD, subscriptionMetadata: subMD, obj: sessionObject{
		ID: id, Object: "checkout.session", AmountSubtotal: total, AmountTotal: total,
		CancelURL: optional(strs["cancel_url"]), ClientReferenceID: optional(strs["client_reference_id"]),
		Created: now.Unix(), Currency: lines[0].currency, Customer: optional(customer), CustomerEmail: optional(email),
		ExpiresAt: now.Add(sessionLifetime).Unix(), Metadata: md, Mode: mode,
		PaymentStatus: stripe.CheckoutSessionPaymentStatusUnpaid, Status: stripe.CheckoutSessionStatusOpen,
		SuccessURL: strs["success_url"], UIMode: "hosted", URL: ptr(c.base() + "/stripe/pay/" + id)}}
	s.stripe.sessions.put(id, sess)
	return sess.obj, nil
}

// checkoutLines reads line_items[i][…]: price_data in payment mode, one price in
// subscription mode.
func (s *Server) checkoutLines(f url.Values, mode stripe.CheckoutSessionMode) ([]checkoutLine, *apiError) {
	n, e := countLineItems(f)
	if e != nil {
		return nil, e
	}
	if n == 0 {
		return nil, stripeMissing("line_items")
	}
	if mode == stripe.CheckoutSessionModeSubscription && n > 1 {
		return nil, stripeInvalid("line_items", "", "The simulator's subscription mode takes exactly one line item.")
	}
	lines := make([]checkoutLine, 0, n)
	for i := range n {
		l, e := s.checkoutLine(f, fmt.Sprintf("line_items[%d]", i), mode)
		if e != nil {
			return nil, e
		}
		if i > 0 && l.currency != lines[0].currency {
			return nil, stripeInvalid(fmt.Sprintf("line_items[%d]", i), "",
				"All line items must use the same currency.")
		}
		lines = append(lines, l)
	}
	return lines, nil
}

func (s *Server) checkoutLine(f url.Values, p string, mode stripe.CheckoutSessionMode) (checkoutLine, *apiError) {
	var l checkoutLine
	qty, e := formInt(f, p+"[quantity]", 1, maxQuantity)
	if e != nil {
		return l, e
	}
	l.quantity = qty
	priceID, hasData := f.Get(p+"[price]"), hasParam(f, p+"[price_data]")
	switch {
	case priceID != "" && hasData:
		return l, stripeInvalid(p+"[price]", "", "You may only specify one of these parameters: price, price_data.")
	case priceID == "" && !hasData:
		return l, stripeInvalid(p+"[price]", "parameter_missing", "You must specify either `price` or `price_data` for each line item.")
	case priceID != "":
		if !strings.HasPrefix(priceID, "price_") || len(priceID) > maxStripeString {
			return l, stripeNoSuch(http.StatusBadRequest, p+"[price]", "price", priceID)
		}
		if mode == stripe.CheckoutSessionModePayment {
			return l, recurringInPaymentMode(p + "[price]")
		}
		pr := s.price(priceID)
		l.name, l.price, l.unitAmount, l.currency = pr.Product, &pr, pr.UnitAmount, pr.Currency
		return l, nil
	}
	pd := p + "[price_data]"
	if mode == stripe.CheckoutSessionModeSubscription {
		return l, stripeInvalid(pd, "", "The simulator's subscription mode takes a line item's `price`, not `price_data`.")
	}
	if hasParam(f, pd+"[recurring]") {
		return l, recurringInPaymentMode(pd + "[recurring]")
	}
	l.currency = strings.ToLower(f.Get(pd + "[currency]"))
	switch {
	case l.currency == "":
		return l, stripeMissing(pd + "[currency]")
	case !isCurrency(l.currency):
		return l, stripeInvalid(pd+"[currency]", "", fmt.Sprintf("Invalid currency: %.10s.", l.currency))
	}
	if l.unitAmount, e = formInt(f, pd+"[unit_amount]", 1, maxUnitAmount); e != nil {
		return l, e
	}
	for _, param := range []string{pd + "[product_data][name]", pd + "[product]"} {
		if l.name, e = formString(f, param, maxStripeString); e != nil || l.name != "" {
			return l, e
		}
	}
	return l, stripeMissing(pd + "[product_data][name]")
}

func recurringInPaymentMode(param string) *apiError {
	return stripeInvalid(param, "", "You specified `payment` mode but passed a recurring price. "+
		"Either switch to `subscription` mode or use only one-time prices.")
}

// countLineItems is one more than the highest line_items index sent.
func countLineItems(f url.Values) (int, *apiError) {
	n := 0
	for k := range f {
		rest, ok := strings.CutPrefix(k, "line_items[")
		if !ok {
			continue
		}
		end := strings.IndexByte(rest, ']')
		i, err := strconv.Atoi(rest[:max(end, 0)])
		if end < 0 || err != nil || i < 0 {
			return 0, stripeInvalid(k, "", "Invalid array")
		}
		if i >= maxLineItems {
			return 0, stripeInvalid("line_items", "", fmt.Sprintf("A Checkout Session can have at most %d line items.", maxLineItems))
		}
		n = max(n, i+1)
	}
	return n, nil
}

// hasParam reports whether any parameter is name or inside it (name[…]).
func hasParam(f url.Values, name string) bool {
	for k := range f {
		if k == name || strings.HasPrefix(k, name+"[") {
			return true
		}
	}
	return false
}

// formString reads an optional string parameter of at most limit bytes.
func formString(f url.Values, param string, limit int) (string, *apiError) {
	v := f.Get(param)
	if len(v) > limit {
		return "", stripeInvalid(param, "", fmt.Sprintf("Invalid string: %.20s...; must be at most %d characters", v, limit))
	}
	return v, nil
}

// formInt reads a required integer parameter within lo..hi.
func formInt(f url.Values, param string, lo, hi int64) (int64, *apiError) {
	v := f.Get(param)
	if v == "" {
		return 0, stripeMissing(param)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, stripeInvalid(param, "parameter_invalid_integer", fmt.Sprintf("Invalid integer: %.20s", v))
	}
	if n < lo {
		return 0, stripeInvalid(param, "parameter_invalid_integer", fmt.Sprintf("This value must be greater than or equal to %d.", lo))
	}
	if n > hi {
		return 0, stripeInvalid(param, "parameter_invalid_integer", fmt.Sprintf("This value must be less than or equal to %d.", hi))
	}
	return n, nil
}

// getCheckoutSession answers GET /v1/checkout/sessions/{id}: the session as it is now.
func (s *Server) getCheckoutSession(c *stripeCall) (any, *apiError) {
	id := c.r.PathValue("id")
	sess, ok := s.stripe.sessions.get(id)
	if !ok {
		return nil, stripeNoSuch(http.StatusNotFound, "session", "checkout.session", id)
	}
	return sess.obj, nil
}
