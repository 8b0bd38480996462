package simulator

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// The hosted payment page a Checkout Session's url points at. It stands in for Stripe's card
// form: one Pay button, so a test (or a person at the demo) completes a payment with a click
// or a POST, and the browser lands on success_url as it would after a real payment.

var payTemplate = template.Must(template.New("pay").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Total}} · Simulated Stripe Checkout</title></head>
<body><main>
<h1>Simulated Stripe Checkout</h1>
<ul id="items">{{range .Lines}}<li>{{.Name}} × {{.Quantity}}: {{.Amount}}</li>{{end}}</ul>
<p>Total: <strong id="amount">{{.Total}}</strong>{{with .Interval}} per {{.}}{{end}}</p>
{{with .Email}}<p id="email">{{.}}</p>{{end}}
{{if .Open}}<form method="post" action="/stripe/pay/{{.ID}}"><button id="pay" type="submit">Pay</button></form>
{{with .CancelURL}}<p><a id="cancel" href="{{.}}">Cancel</a></p>{{end}}
{{else}}<p id="paid">This payment is complete.</p>
<p><a id="continue" href="{{.SuccessURL}}">Continue</a></p>{{end}}
</main></body></html>
`))

type payView struct {
	ID, Total, Interval, Email, CancelURL, SuccessURL string
	Open                                              bool
	Lines                                             []payLineView
}

type payLineView struct {
	Name     string
	Quantity int64
	Amount   string
}

// payPage answers GET /stripe/pay/{id}.
func (s *Server) payPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.payView(r.PathValue("id"))
	if !ok {
		http.Error(w, "No such Checkout Session (unknown, or forgotten after newer ones).", http.StatusNotFound)
		return
	}
	writeHTML(w, payTemplate, v)
}

func (s *Server) payView(id string) (payView, bool) {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	sess, ok := st.sessions.get(id)
	if !ok {
		return payView{}, false
	}
	o := sess.obj
	v := payView{ID: o.ID, Total: formatAmount(o.AmountTotal, o.Currency), Open: o.Status == stripe.CheckoutSessionStatusOpen,
		SuccessURL: successURL(o), CancelURL: deref(o.CancelURL), Email: deref(o.CustomerEmail)}
	if cust, ok := st.customers.get(deref(o.Customer)); ok && v.Email == "" {
		v.Email = deref(cust.obj.Email)
	}
	for _, l := range sess.lines {
		v.Lines = append(v.Lines, payLineView{Name: l.name, Quantity: l.quantity, Amount: formatAmount(l.unitAmount*l.quantity, l.currency)})
		if l.price != nil {
			v.Interval = string(l.price.Recurring.Interval)
		}
	}
	return v, true
}

// pay answers the Pay form's POST: the session is paid, its webhooks are delivered, and only
// then is the payer sent to success_url, so the gateway has heard of the payment by the time
// its success page loads. Paying a paid session again only redirects.
func (s *Server) pay(w http.ResponseWriter, r *http.Request) {
	target, events, ok := s.completeCheckout(r.PathValue("id"))
	if !ok {
		http.Error(w, "No such Checkout Session (unknown, or forgotten after newer ones).", http.StatusNotFound)
		return
	}
	s.deliver(events...)
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// completeCheckout marks session id paid and creates what the payment made (charge; for a
// subscription the customer if none, the subscription and its first invoice) and the events
// to deliver: customer.subscription.created and invoice.paid before
// checkout.session.completed, the order Stripe usually sends them in (it promises none).
func (s *Server) completeCheckout(id string) (target string, events []*stripeEvent, found bool) {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	sess, ok := st.sessions.get(id)
	if !ok {
		return "", nil, false
	}
	o := &sess.obj
	if o.Status != stripe.CheckoutSessionStatusOpen {
		return successURL(*o), nil, true
	}
	now := time.Now()
	email := deref(o.CustomerEmail)
	if cust, ok := st.customers.get(deref(o.Customer)); ok && email == "" {
		email = deref(cust.obj.Email)
	}
	o.Status, o.PaymentStatus, o.URL = stripe.CheckoutSessionStatusComplete, stripe.CheckoutSessionPaymentStatusPaid, nil
	o.CustomerDetails = &customerDetails{Email: optional(email)}
	if o.Mode == stripe.CheckoutSessionModeSubscription && o.Customer == nil {
		// Subscription mode always makes a customer; payment mode leaves it null.
		o.Customer = ptr(s.newCustomer(email, "", map[string]string{}, now).obj.ID)
	}
	paymentIntent := s.newID("pi_")
	md := sess.paymentMetadata
	if md == nil {
		md = o.Metadata
	}
	sess.charge = &chargeObject{ID: s.newID("ch_"), Object: "charge", Amount: o.AmountTotal, AmountCaptured: o.AmountTotal,
		Captured: true, Created: now.Unix(), Currency: o.Currency, Customer: copyPtr(o.Customer), Metadata: copyMetadata(md),
		Paid: true, PaymentIntent: paymentIntent, Status: stripe.ChargeStatusSucceeded}
	if o.Mode == stripe.CheckoutSessionModeSubscription {
		line := sess.lines[0]
		sub := s.newSubscription(*o.Customer, *line.price, line.quantity, sess.subscriptionMetadata, now)
		item := sub.obj.Items.Data[0]
		inv := s.newInvoice(sub, stripe.InvoiceBillingReasonSubscriptionCreate, stripe.InvoiceStatusPaid, now,
			periodObject{Start: now.Unix(), End: now.Unix()}, periodObject{Start: item.CurrentPeriodStart, End: item.CurrentPeriodEnd})
		o.Subscription, o.Invoice = ptr(sub.obj.ID), ptr(inv.ID)
		events = append(events, s.newEvent(stripe.EventTypeCustomerSubscriptionCreated, sub.obj, nil),
			s.newEvent(stripe.EventTypeInvoicePaid, inv, nil))
	} else {
		// Stripe creates a payment-mode session's PaymentIntent when it is paid, not before.
		o.PaymentIntent = ptr(paymentIntent)
	}
	events = append(events, s.newEvent(stripe.EventTypeCheckoutSessionCompleted, *o, nil))
	return successURL(*o), events, true
}

// successURL is where a paid session sends the payer: success_url with Stripe's
// {CHECKOUT_SESSION_ID} template variable filled in.
func successURL(o sessionObject) string {
	return strings.ReplaceAll(o.SuccessURL, "{CHECKOUT_SESSION_ID}", o.ID)
}

// zeroDecimal are the currencies Stripe counts in whole units (no cents).
var zeroDecimal = map[string]bool{"bif": true, "clp": true, "djf": true, "gnf": true, "jpy": true, "kmf": true,
	"krw": true, "mga": true, "pyg": true, "rwf": true, "ugx": true, "vnd": true, "vuv": true, "xaf": true,
	"xof": true, "xpf": true}

// formatAmount shows an amount in the currency's smallest unit as a person reads it.
func formatAmount(amount int64, currency string) string {
	if zeroDecimal[currency] {
		return fmt.Sprintf("%d %s", amount, strings.ToUpper(currency))
	}
	return fmt.Sprintf("%d.%02d %s", amount/100, amount%100, strings.ToUpper(currency))
}

// writeHTML renders a hosted page; it is rendered first so a template error is a 500, not
// half a page.
func writeHTML(w http.ResponseWriter, t *template.Template, v any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		http.Error(w, "simulator: rendering the page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}
