package simulator

import (
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// The billing portal: POST /v1/billing_portal/sessions makes a session whose url shows the
// customer's subscriptions, each with a "Cancel subscription" form that cancels at the end of
// the period, as Stripe's default portal configuration does, and a "Switch to" form for each
// price the portal offers (SetPortalPrices), as a portal configured for plan changes does.

// maxPortalForm bounds the portal's form posts, which carry a subscription id and a price id.
const maxPortalForm = 64 << 10

// maxPortalPrices bounds the prices the portal offers, as Stripe bounds the products a portal
// configuration offers to switch to.
const maxPortalPrices = 10

// SetPortalPrices sets the prices the billing portal offers to switch to, in their order
// (none: the portal offers no switch, as at the start). Each subscription that has not ended
// and is not cancelling gets a "Switch to" button (id="switch-<subscription>-<price>") for each
// of them in its currency other than its own price; switching moves its item to the price as
// POST /v1/subscriptions/{id} with proration_behavior=always_invoice does: a dearer price is
// invoiced and paid at once (customer.subscription.updated, then invoice.paid), a cheaper one
// only sends customer.subscription.updated.
func (s *Server) SetPortalPrices(ids ...string) error {
	if len(ids) > maxPortalPrices {
		return fmt.Errorf("simulator: the billing portal offers at most %d prices, got %d", maxPortalPrices, len(ids))
	}
	prices := make([]string, 0, len(ids))
	for _, id := range ids {
		switch {
		case !strings.HasPrefix(id, "price_") || len(id) > maxStripeString:
			return fmt.Errorf("simulator: price id %.40q must start with price_ (and be at most %d bytes)", id, maxStripeString)
		case !slices.Contains(prices, id):
			prices = append(prices, id)
		}
	}
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	st.portalPrices = prices
	return nil
}

// portalPricesNow is the prices the portal offers.
func (s *Server) portalPricesNow() []string {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	return append([]string{}, st.portalPrices...) // [] rather than null when none
}

// createPortalSession answers POST /v1/billing_portal/sessions (customer, return_url).
func (s *Server) createPortalSession(c *stripeCall) (any, *apiError) {
	customer, e := formString(c.form, "customer", maxStripeString)
	if e != nil {
		return nil, e
	}
	if customer == "" {
		return nil, stripeMissing("customer")
	}
	if _, ok := s.stripe.customers.get(customer); !ok {
		return nil, stripeNoSuch(http.StatusBadRequest, "customer", "customer", customer)
	}
	ret, e := formString(c.form, "return_url", maxStripeString)
	if e != nil {
		return nil, e
	}
	if _, e := formURL(c.form, "return_url"); e != nil {
		return nil, e
	}
	id := s.newID("bps_")
	p := &portalSessionObject{ID: id, Object: "billing_portal.session", Configuration: s.newID("bpc_"),
		Created: time.Now().Unix(), Customer: customer, ReturnURL: optional(ret), URL: c.base() + "/stripe/portal/" + id}
	s.stripe.portals.put(id, p)
	return *p, nil
}

var portalTemplate = template.Must(template.New("portal").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Simulated Stripe billing portal</title></head>
<body><main>
<h1>Simulated Stripe billing portal</h1>
<p id="customer">{{.Customer}}{{with .Email}} ({{.}}){{end}}</p>
{{range .Subscriptions}}<section class="subscription" id="{{.ID}}">
<p>{{.ID}}: {{.Price}}, {{.Amount}} per {{.Interval}}, <span class="status">{{.Status}}</span></p>
{{if .Ended}}<p class="ended">Ended.</p>
{{else if .CancelAtPeriodEnd}}<p class="cancels">Cancels on {{.PeriodEnd}}.</p>
{{else}}<p class="renews">Renews on {{.PeriodEnd}}.</p>
{{range .Switches}}<form method="post" action="/stripe/portal/{{$.ID}}/switch"><input type="hidden" name="subscription" value="{{.Subscription}}"><input type="hidden" name="price" value="{{.Price}}">
<button id="switch-{{.Subscription}}-{{.Price}}" type="submit">Switch to {{.Price}}, {{.Amount}} per {{.Interval}}</button></form>
{{end}}<form method="post" action="/stripe/portal/{{$.ID}}/cancel"><input type="hidden" name="subscription" value="{{.ID}}">
<button id="cancel-{{.ID}}" type="submit">Cancel subscription</button></form>
{{end}}</section>
{{else}}<p id="none">No subscriptions.</p>
{{end}}{{with .ReturnURL}}<p><a id="return" href="{{.}}">Return</a></p>{{end}}
</main></body></html>
`))

type portalView struct {
	ID, Customer, Email, ReturnURL string
	Subscriptions                  []portalSubscriptionView
}

type portalSubscriptionView struct {
	ID, Price, Amount, Interval, Status, PeriodEnd string
	Ended, CancelAtPeriodEnd                       bool
	Switches                                       []portalSwitchView
}

// portalSwitchView is a "Switch to" form: subscription Subscription to price Price.
type portalSwitchView struct {
	Subscription, Price, Amount, Interval string
}

// portalPage answers GET /stripe/portal/{id}.
func (s *Server) portalPage(w http.ResponseWriter, r *http.Request) {
	v, ok := s.portalView(r.PathValue("id"))
	if !ok {
		http.Error(w, "No such billing portal session (unknown, or forgotten after newer ones).", http.StatusNotFound)
		return
	}
	writeHTML(w, portalTemplate, v)
}

func (s *Server) portalView(id string) (portalView, bool) {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.portals.get(id)
	if !ok {
		return portalView{}, false
	}
	v := portalView{ID: p.ID, Customer: p.Customer, ReturnURL: deref(p.ReturnURL)}
	cust, ok := st.customers.get(p.Customer)
	if !ok {
		return v, true
	}
	v.Email = deref(cust.obj.Email)
	for _, subID := range cust.subscriptions {
		sub, ok := st.subscriptions.get(subID)
		if !ok {
			continue
		}
		item := sub.obj.Items.Data[0]
		sv := portalSubscriptionView{ID: sub.obj.ID, Price: item.Price.ID,
			Amount: formatAmount(item.Price.UnitAmount*item.Quantity, item.Price.Currency), Interval: string(item.Price.Recurring.Interval),
			Status: string(sub.obj.Status), PeriodEnd: time.Unix(item.CurrentPeriodEnd, 0).UTC().Format(time.DateOnly),
			Ended: sub.obj.Status == stripe.SubscriptionStatusCanceled, CancelAtPeriodEnd: sub.obj.CancelAtPeriodEnd}
		if !sv.Ended && !sv.CancelAtPeriodEnd {
			for _, id := range st.portalPrices {
				if p := s.price(id); id != item.Price.ID && p.Currency == sub.obj.Currency {
					sv.Switches = append(sv.Switches, portalSwitchView{Subscription: sub.obj.ID, Price: id,
						Amount: formatAmount(p.UnitAmount*item.Quantity, p.Currency), Interval: string(p.Recurring.Interval)})
				}
			}
		}
		v.Subscriptions = append(v.Subscriptions, sv)
	}
	return v, true
}

// portalCancel answers the Cancel subscription form: the subscription is set to cancel at
// the end of its period (customer.subscription.updated is delivered first), then the portal
// page is shown again. Cancelling one that is already cancelling or ended changes nothing.
func (s *Server) portalCancel(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPortalForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "Invalid form: "+err.Error(), http.StatusBadRequest)
		return
	}
	id, subID := r.PathValue("id"), r.PostForm.Get("subscription")
	owned, cancellable := s.portalSubscription(id, subID)
	if !owned {
		http.Error(w, "No such subscription in this billing portal session.", http.StatusNotFound)
		return
	}
	if cancellable {
		// An error here is a concurrent cancellation winning the race: nothing left to do.
		_, _ = s.UpdateSubscription(subID, "", true)
	}
	http.Redirect(w, r, "/stripe/portal/"+id, http.StatusSeeOther)
}

// portalSwitch answers a "Switch to" form: the subscription moves to the price (see
// SetPortalPrices), its events are delivered, then the portal page is shown again. Switching a
// subscription that has ended or is cancelling, or to the price it has, changes nothing.
func (s *Server) portalSwitch(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxPortalForm)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "Invalid form: "+err.Error(), http.StatusBadRequest)
		return
	}
	id := r.PathValue("id")
	events, e := s.switchPrice(id, r.PostForm.Get("subscription"), r.PostForm.Get("price"))
	if e != nil {
		http.Error(w, e.Message, e.Status)
		return
	}
	s.deliver(events...)
	http.Redirect(w, r, "/stripe/portal/"+id, http.StatusSeeOther)
}

// switchPrice moves subscription subID of portal session id's customer to price priceID, one
// the portal offers, with always_invoice semantics, and returns the events to deliver.
func (s *Server) switchPrice(id, subID, priceID string) ([]*stripeEvent, *apiError) {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.portals.get(id)
	if !ok {
		return nil, &apiError{Status: http.StatusNotFound, Message: "No such billing portal session (unknown, or forgotten after newer ones)."}
	}
	sub, ok := st.subscriptions.get(subID)
	if !ok || sub.obj.Customer != p.Customer {
		return nil, &apiError{Status: http.StatusNotFound, Message: "No such subscription in this billing portal session."}
	}
	if !slices.Contains(st.portalPrices, priceID) {
		return nil, &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("This billing portal offers no price %.40q.", priceID)}
	}
	if sub.obj.Status == stripe.SubscriptionStatusCanceled || sub.obj.CancelAtPeriodEnd {
		return nil, nil
	}
	return s.updateSubscription(sub, subscriptionChange{items: true, item: sub.obj.Items.Data[0].ID, price: priceID,
		proration: prorationAlwaysInvoice}, time.Now())
}

// portalSubscription reports whether subscription subID belongs to portal session id's
// customer, and whether it can still be cancelled.
func (s *Server) portalSubscription(id, subID string) (owned, cancellable bool) {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	p, ok := st.portals.get(id)
	if !ok {
		return false, false
	}
	sub, ok := st.subscriptions.get(subID)
	if !ok || sub.obj.Customer != p.Customer {
		return false, false
	}
	return true, sub.obj.Status != stripe.SubscriptionStatusCanceled && !sub.obj.CancelAtPeriodEnd
}
