// Package billing lets account holders pay for themselves through Stripe: a checkout for
// credits, and the signed webhook that grants them. Credits are granted only from the webhook
// (never from the buyer's redirect back), through the account's quota owner, once per Stripe
// checkout session whatever the webhook's retries, and durably before the webhook's 200.
package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Credits is the quota service's top-up: once per idempotency key, durable before it returns.
type Credits interface {
	AddCredits(ctx context.Context, account string, amount money.Amount, idempotencyKey string) (money.Amount, bool, error)
}

// Store keeps what was paid: the node's store, or a cluster's metadata shard (every node
// sees the same). It reads the account a webhook names (which must exist), keeps the
// operator's record of each payment, finds a purchase by the payment intent its refunds and
// disputes name, and keeps each account's subscription with its plan.
type Store interface {
	GetAccount(id string) (persistence.Account, error)
	RecordPayment(p persistence.Payment) (bool, error)
	Payments() ([]persistence.Payment, error)
	PaymentByIntent(pi string) (persistence.Payment, error)
	Subscription(accountID string) (persistence.Subscription, error)
	ApplySubscription(c persistence.SubscriptionChange) (persistence.Account, bool, error)
}

// Deps are what the service works with.
type Deps struct {
	Catalog  *catalog.Holder
	Credits  Credits
	Reverser Reverser
	Store    Store
	// Count counts webhooks by kind and outcome (modelgate_payments_total); nil: none.
	Count  func(kind, outcome string)
	Logger *slog.Logger
}

// Service is the Stripe side of the gateway.
type Service struct {
	d Deps

	mu      sync.Mutex
	clients map[string]*stripe.Client // by API base and key: a rotated key gets its own
}

// New returns the service.
func New(d Deps) *Service {
	if d.Count == nil {
		d.Count = func(string, string) {}
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Service{d: d, clients: map[string]*stripe.Client{}}
}

// config is billing.stripe, nil when payments are off.
func (s *Service) config() *catalog.Stripe { return s.d.Catalog.Load().Billing.Stripe }

// Enabled reports whether the catalog configures Stripe.
func (s *Service) Enabled() bool { return s.config() != nil }

// ErrDisabled is what a payment call gets without billing.stripe.
var ErrDisabled = errors.New("payments are not configured (billing.stripe)")

// stripeTimeout bounds one call to Stripe's API, its retries included.
const stripeTimeout = 30 * time.Second

// client is a Stripe client for the configured API base and the secret key now in the
// environment (read at each call: a rotated key needs no reload). Its logger is silent:
// Stripe's errors are returned and logged by the caller, without the key.
func (s *Service) client(cfg *catalog.Stripe) (*stripe.Client, error) {
	key := os.Getenv(cfg.SecretKeyEnv)
	if key == "" {
		return nil, fmt.Errorf("environment variable %s is empty", cfg.SecretKeyEnv)
	}
	id := cfg.APIBase + "\x00" + key
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[id]; ok {
		return c, nil
	}
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL:               stripe.String(cfg.APIBase),
		HTTPClient:        &http.Client{Timeout: stripeTimeout},
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
		MaxNetworkRetries: stripe.Int64(2),
	})
	c := stripe.NewClient(key, stripe.WithBackends(&stripe.Backends{API: backend, Connect: backend, Uploads: backend, MeterEvents: backend}))
	clear(s.clients) // one key at a time: an old key's client is not kept
	s.clients[id] = c
	return c, nil
}
