package billing

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/respond"
)

// WebhookPath is where Stripe sends the account's events, on the public port.
const WebhookPath = "/billing/stripe/webhook"

// maxEventBytes bounds a webhook body: Stripe's events are a few KiB, never over 1 MiB.
const maxEventBytes = 1 << 20

// signatureTolerance is how old a signed event may be: an older one is a replay.
const signatureTolerance = 5 * time.Minute

// Webhook answers POST /billing/stripe/webhook. A bad or stale signature is a 400 and nothing
// is done; an event applied (or applied before) is a 200 once its effect is durable; an event
// that failed on the gateway's side is a 500, which Stripe retries; an event of a type the
// gateway does not act on is acknowledged and ignored.
func (s *Service) Webhook(w http.ResponseWriter, r *http.Request) {
	cfg := s.config()
	if cfg == nil {
		respond.Error(w, http.StatusNotFound, "invalid_request_error", "not_found", "", "payments are not configured")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxEventBytes+1))
	if err != nil || len(body) > maxEventBytes {
		s.d.Count("unknown", "refused")
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "bad_event", "", "the event body could not be read or is over 1 MiB")
		return
	}
	secret := os.Getenv(cfg.WebhookSecretEnv)
	if secret == "" { // anyone can sign with an empty secret: nothing is verified without one
		s.d.Count("unknown", "failed")
		s.d.Logger.Error("stripe webhook: the secret's variable is empty; every event is refused until it is set", "env", cfg.WebhookSecretEnv)
		respond.Error(w, http.StatusServiceUnavailable, "api_error", "webhook_secret_missing", "", "the gateway cannot verify events now; Stripe will send them again")
		return
	}
	// The account's webhook endpoint may be pinned to another API version than the
	// library's: the members read below are the same in every version.
	ev, err := webhook.ConstructEventWithOptions(body, r.Header.Get("Stripe-Signature"), secret,
		webhook.ConstructEventOptions{Tolerance: signatureTolerance, IgnoreAPIVersionMismatch: true})
	if err != nil {
		s.d.Count("unknown", "refused")
		s.d.Logger.Warn("stripe webhook refused", "err", err, "remote", r.RemoteAddr)
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "bad_signature", "", "the Stripe-Signature does not verify, or the event is too old")
		return
	}
	status := http.StatusOK
	switch ev.Type {
	case "checkout.session.completed", "checkout.session.async_payment_succeeded":
		status = s.sessionPaid(r, ev.ID, ev.Data.Raw)
	case "charge.refunded":
		status = s.refunded(r, &ev)
	case "charge.dispute.created":
		status = s.disputed(r, &ev)
	case "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted":
		status = s.subscriptionChanged(&ev)
	case "invoice.paid", "invoice.payment_failed":
		status = s.invoiceSettled(&ev, ev.Type == "invoice.paid")
	default:
		s.d.Count("ignored", "ignored")
	}
	if status != http.StatusOK {
		respond.Error(w, status, "api_error", "retry", "", "the event could not be applied now; Stripe will send it again")
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"received": true})
}

// checkoutSession is what the gateway reads of a Checkout Session.
type checkoutSession struct {
	ID                string            `json:"id"`
	Mode              string            `json:"mode"`
	PaymentStatus     string            `json:"payment_status"`
	AmountTotal       int64             `json:"amount_total"`
	Currency          string            `json:"currency"`
	ClientReferenceID string            `json:"client_reference_id"`
	Customer          json.RawMessage   `json:"customer"`       // an id, or the expanded object
	PaymentIntent     json.RawMessage   `json:"payment_intent"` // likewise; what refunds name
	Metadata          map[string]string `json:"metadata"`
}

// kindCredits marks the sessions the gateway made for a credit purchase.
const kindCredits = "credits"

// sessionPaid grants a paid credit purchase: once per session, whatever the retries; the
// status is the webhook's answer.
func (s *Service) sessionPaid(r *http.Request, eventID string, raw json.RawMessage) int {
	var cs checkoutSession
	if err := json.Unmarshal(raw, &cs); err != nil || cs.ID == "" {
		s.d.Count(kindCredits, "refused")
		s.d.Logger.Warn("stripe checkout session unreadable", "event", eventID, "err", err)
		return http.StatusOK // a retry holds the same bytes
	}
	if cs.Metadata["modelgate_kind"] != kindCredits || cs.Mode != "payment" {
		// A plan's checkout (mode subscription) is applied by its subscription's own events.
		s.d.Count("ignored", "ignored")
		return http.StatusOK // not a purchase this gateway made
	}
	if cs.PaymentStatus != "paid" {
		s.d.Count(kindCredits, "ignored") // an async payment: its async_payment_succeeded grants
		return http.StatusOK
	}
	if cs.Currency != "usd" || cs.AmountTotal <= 0 {
		s.d.Count(kindCredits, "refused")
		s.d.Logger.Error("stripe purchase not in US cents; not granted", "session", cs.ID, "currency", cs.Currency)
		return http.StatusOK
	}
	acct, err := s.d.Store.GetAccount(cs.ClientReferenceID)
	if err != nil {
		if errors.Is(err, persistence.ErrNotFound) {
			s.d.Count(kindCredits, "refused")
			s.d.Logger.Error("stripe purchase for an unknown account; not granted", "session", cs.ID, "account", cs.ClientReferenceID)
			return http.StatusOK
		}
		s.d.Count(kindCredits, "failed")
		return http.StatusInternalServerError
	}
	amount := catalog.CentsToCredits(cs.AmountTotal)
	_, added, err := s.d.Credits.AddCredits(r.Context(), acct.ID, amount, purchaseKeyPrefix+cs.ID)
	switch {
	case errors.Is(err, quota.ErrIdempotencyConflict):
		s.d.Count(kindCredits, "refused")
		s.d.Logger.Error("stripe session granted before with another amount", "session", cs.ID)
		return http.StatusOK
	case err != nil:
		s.d.Count(kindCredits, "failed")
		s.d.Logger.Error("stripe purchase not granted yet; Stripe retries", "session", cs.ID, "err", err)
		return http.StatusInternalServerError
	}
	// Granted, not recorded, not answered: a crash here must leave the retry to record only.
	supervise.Fault("billing.webhook.granted")
	if _, err := s.d.Store.RecordPayment(persistence.Payment{StripeID: cs.ID, EventID: eventID, Kind: persistence.PaymentCredits,
		Outcome: persistence.GrantedOutcome, Account: acct.ID, Amount: int64(amount), Cents: cs.AmountTotal, Customer: objectID(cs.Customer),
		PaymentIntent: objectID(cs.PaymentIntent), At: time.Now().Unix()}); err != nil {
		s.d.Count(kindCredits, "failed")
		return http.StatusInternalServerError // the retry finds the grant made and records it
	}
	// Granted and recorded, not answered: a crash here must leave the retry nothing to do.
	supervise.Fault("billing.webhook.recorded")
	if added {
		s.d.Count(kindCredits, "granted")
	} else {
		s.d.Count(kindCredits, "repeated")
	}
	return http.StatusOK
}

// objectID is the id of a member that is an id or an expanded object ("" when null).
func objectID(raw json.RawMessage) string {
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id
	}
	var o struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.ID
}
