package simulator

import (
	"net/http"
	"time"
)

// stripeCustomer is a customer and the subscriptions it holds, which its billing portal lists.
type stripeCustomer struct {
	obj           customerObject
	subscriptions []string // ids, oldest first; ids the store has forgotten are skipped
}

// createCustomer answers POST /v1/customers (email, name, metadata[…]).
func (s *Server) createCustomer(c *stripeCall) (any, *apiError) {
	email, e := formString(c.form, "email", maxStripeString)
	if e != nil {
		return nil, e
	}
	name, e := formString(c.form, "name", maxStripeString)
	if e != nil {
		return nil, e
	}
	md, e := formMetadata(c.form, "metadata")
	if e != nil {
		return nil, e
	}
	return s.newCustomer(email, name, md, time.Now()).obj, nil
}

// newCustomer stores a customer; the account lock is held.
func (s *Server) newCustomer(email, name string, md map[string]string, now time.Time) *stripeCustomer {
	cust := &stripeCustomer{obj: customerObject{ID: s.newID("cus_"), Object: "customer", Created: now.Unix(),
		Email: optional(email), Metadata: md, Name: optional(name)}}
	s.stripe.customers.put(cust.obj.ID, cust)
	return cust
}

// getCustomer answers GET /v1/customers/{id}.
func (s *Server) getCustomer(c *stripeCall) (any, *apiError) {
	id := c.r.PathValue("id")
	cust, ok := s.stripe.customers.get(id)
	if !ok {
		return nil, stripeNoSuch(http.StatusNotFound, "id", "customer", id)
	}
	return cust.obj, nil
}
