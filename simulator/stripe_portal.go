package simulator

import (
	"html/template"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// The billing portal: POST /v1/billing_portal/sessions makes a session whose url shows the
// customer's subscriptions, each with a "Cancel subscription" form that cancels at the end of
// the period, as Stripe's default portal configuration does.

// maxPortalForm bounds the portal's form posts, which carry one subscription id.
const maxPortalForm = 64 << 10

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
<form method="post" action="/stripe/portal/{{$.ID}}/cancel"><input type="hidden" name="subscription" value="{{.ID}}">
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
		v.Subscriptions = append(v.Subscriptions, portalSubscriptionView{ID: sub.obj.ID, Price: item.Price.ID,
			Amount: formatAmount(item.Price.UnitAmount*item.Quantity, item.Price.Currency), Interval: string(item.Price.Recurring.Interval),
			Status: string(sub.obj.Status), PeriodEnd: time.Unix(item.CurrentPeriodEnd, 0).UTC().Format(time.DateOnly),
			Ended: sub.obj.Status == stripe.SubscriptionStatusCanceled, CancelAtPeriodEnd: sub.obj.CancelAtPeriodEnd})
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
