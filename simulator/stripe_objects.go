package simulator

import (
	"encoding/json"

	"github.com/stripe/stripe-go/v82"
)

// The Stripe objects as the API renders them, for API answers and event payloads. stripe-go's
// own types cannot render them: they have no MarshalJSON, so an unexpanded reference such as
// a session's customer would come out as a whole empty Customer instead of its id, and unset
// members as "" or 0 instead of null. These structs carry the members Stripe sends that a
// gateway may read, with stripe-go's enum types where it has them; the tests decode each into
// stripe-go's type to prove stripe-go parses it.
//
// They follow the API version stripe-go pins (stripe.APIVersion, a "basil" version): the
// billing period is on each subscription item, not on the subscription; an invoice names its
// subscription under parent.subscription_details and each line's price under
// pricing.price_details; a payment-mode session has no payment_intent until it is paid.

type customerObject struct {
	ID       string            `json:"id"`
	Object   string            `json:"object"`
	Created  int64             `json:"created"`
	Email    *string           `json:"email"`
	Livemode bool              `json:"livemode"`
	Metadata map[string]string `json:"metadata"`
	Name     *string           `json:"name"`
}

type sessionObject struct {
	ID                string                              `json:"id"`
	Object            string                              `json:"object"`
	AmountSubtotal    int64                               `json:"amount_subtotal"`
	AmountTotal       int64                               `json:"amount_total"`
	CancelURL         *string                             `json:"cancel_url"`
	ClientReferenceID *string                             `json:"client_reference_id"`
	Created           int64                               `json:"created"`
	Currency          string                              `json:"currency"`
	Customer          *string                             `json:"customer"`
	CustomerDetails   *customerDetails                    `json:"customer_details"`
	CustomerEmail     *string                             `json:"customer_email"`
	ExpiresAt         int64                               `json:"expires_at"`
	Invoice           *string                             `json:"invoice"`
	Livemode          bool                                `json:"livemode"`
	Metadata          map[string]string                   `json:"metadata"`
	Mode              stripe.CheckoutSessionMode          `json:"mode"`
	PaymentIntent     *string                             `json:"payment_intent"`
	PaymentStatus     stripe.CheckoutSessionPaymentStatus `json:"payment_status"`
	Status            stripe.CheckoutSessionStatus        `json:"status"`
	Subscription      *string                             `json:"subscription"`
	SuccessURL        string                              `json:"success_url"`
	UIMode            string                              `json:"ui_mode"`
	URL               *string                             `json:"url"` // null once the session is no longer open
}

// customerDetails is what the payer entered, set when the session completes.
type customerDetails struct {
	Email *string `json:"email"`
	Name  *string `json:"name"`
}

type priceObject struct {
	ID                string                `json:"id"`
	Object            string                `json:"object"`
	Active            bool                  `json:"active"`
	Currency          string                `json:"currency"`
	Livemode          bool                  `json:"livemode"`
	Metadata          map[string]string     `json:"metadata"`
	Product           string                `json:"product"`
	Recurring         *priceRecurringObject `json:"recurring"`
	Type              stripe.PriceType      `json:"type"`
	UnitAmount        int64                 `json:"unit_amount"`
	UnitAmountDecimal string                `json:"unit_amount_decimal"` // a decimal string, as Stripe sends it
}

type priceRecurringObject struct {
	Interval      stripe.PriceRecurringInterval  `json:"interval"`
	IntervalCount int64                          `json:"interval_count"`
	UsageType     stripe.PriceRecurringUsageType `json:"usage_type"`
}

type listObject[T any] struct {
	Object     string `json:"object"`
	Data       []T    `json:"data"`
	HasMore    bool   `json:"has_more"`
	TotalCount int    `json:"total_count"`
	URL        string `json:"url"`
}

func newList[T any](url string, data ...T) listObject[T] {
	return listObject[T]{Object: "list", Data: data, TotalCount: len(data), URL: url}
}

type subscriptionObject struct {
	ID                  string                              `json:"id"`
	Object              string                              `json:"object"`
	BillingCycleAnchor  int64                               `json:"billing_cycle_anchor"`
	CancelAt            *int64                              `json:"cancel_at"`
	CancelAtPeriodEnd   bool                                `json:"cancel_at_period_end"`
	CanceledAt          *int64                              `json:"canceled_at"`
	CancellationDetails cancellationDetails                 `json:"cancellation_details"`
	CollectionMethod    stripe.SubscriptionCollectionMethod `json:"collection_method"`
	Created             int64                               `json:"created"`
	Currency            string                              `json:"currency"`
	Customer            string                              `json:"customer"`
	EndedAt             *int64                              `json:"ended_at"`
	Items               listObject[subscriptionItemObject]  `json:"items"`
	LatestInvoice       *string                             `json:"latest_invoice"`
	Livemode            bool                                `json:"livemode"`
	Metadata            map[string]string                   `json:"metadata"`
	StartDate           int64                               `json:"start_date"`
	Status              stripe.SubscriptionStatus           `json:"status"`
}

type cancellationDetails struct {
	Comment  *string                                       `json:"comment"`
	Feedback *string                                       `json:"feedback"`
	Reason   *stripe.SubscriptionCancellationDetailsReason `json:"reason"`
}

type subscriptionItemObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Created            int64             `json:"created"`
	CurrentPeriodEnd   int64             `json:"current_period_end"`
	CurrentPeriodStart int64             `json:"current_period_start"`
	Metadata           map[string]string `json:"metadata"`
	Price              priceObject       `json:"price"`
	Quantity           int64             `json:"quantity"`
	Subscription       string            `json:"subscription"`
}

type invoiceObject struct {
	ID               string                         `json:"id"`
	Object           string                         `json:"object"`
	AmountDue        int64                          `json:"amount_due"`
	AmountPaid       int64                          `json:"amount_paid"`
	AmountRemaining  int64                          `json:"amount_remaining"`
	AttemptCount     int64                          `json:"attempt_count"`
	Attempted        bool                           `json:"attempted"`
	BillingReason    stripe.InvoiceBillingReason    `json:"billing_reason"`
	CollectionMethod stripe.InvoiceCollectionMethod `json:"collection_method"`
	Created          int64                          `json:"created"`
	Currency         string                         `json:"currency"`
	Customer         string                         `json:"customer"`
	CustomerEmail    *string                        `json:"customer_email"`
	Lines            listObject[invoiceLineObject]  `json:"lines"`
	Livemode         bool                           `json:"livemode"`
	Metadata         map[string]string              `json:"metadata"`
	Parent           invoiceParent                  `json:"parent"`
	PeriodEnd        int64                          `json:"period_end"`
	PeriodStart      int64                          `json:"period_start"`
	Status           stripe.InvoiceStatus           `json:"status"`
	Subtotal         int64                          `json:"subtotal"`
	Total            int64                          `json:"total"`
}

type invoiceParent struct {
	QuoteDetails        *struct{}                  `json:"quote_details"`
	SubscriptionDetails invoiceSubscriptionDetails `json:"subscription_details"`
	Type                stripe.InvoiceParentType   `json:"type"`
}

type invoiceSubscriptionDetails struct {
	Metadata     map[string]string `json:"metadata"`
	Subscription string            `json:"subscription"`
}

type invoiceLineObject struct {
	ID          string            `json:"id"`
	Object      string            `json:"object"`
	Amount      int64             `json:"amount"`
	Currency    string            `json:"currency"`
	Description string            `json:"description"`
	Invoice     string            `json:"invoice"`
	Livemode    bool              `json:"livemode"`
	Metadata    map[string]string `json:"metadata"`
	Parent      invoiceLineParent `json:"parent"`
	Period      periodObject      `json:"period"`
	Pricing     linePricing       `json:"pricing"`
	Quantity    int64             `json:"quantity"`
}

type invoiceLineParent struct {
	InvoiceItemDetails      *struct{}                        `json:"invoice_item_details"`
	SubscriptionItemDetails subscriptionItemDetails          `json:"subscription_item_details"`
	Type                    stripe.InvoiceLineItemParentType `json:"type"`
}

type subscriptionItemDetails struct {
	InvoiceItem      *string `json:"invoice_item"`
	Proration        bool    `json:"proration"`
	Subscription     string  `json:"subscription"`
	SubscriptionItem string  `json:"subscription_item"`
}

type periodObject struct {
	End   int64 `json:"end"`
	Start int64 `json:"start"`
}

type linePricing struct {
	PriceDetails      priceDetails                      `json:"price_details"`
	Type              stripe.InvoiceLineItemPricingType `json:"type"`
	UnitAmountDecimal string                            `json:"unit_amount_decimal"`
}

type priceDetails struct {
	Price   string `json:"price"`
	Product string `json:"product"`
}

type chargeObject struct {
	ID             string              `json:"id"`
	Object         string              `json:"object"`
	Amount         int64               `json:"amount"`
	AmountCaptured int64               `json:"amount_captured"`
	AmountRefunded int64               `json:"amount_refunded"`
	Captured       bool                `json:"captured"`
	Created        int64               `json:"created"`
	Currency       string              `json:"currency"`
	Customer       *string             `json:"customer"`
	Disputed       bool                `json:"disputed"`
	Livemode       bool                `json:"livemode"`
	Metadata       map[string]string   `json:"metadata"`
	Paid           bool                `json:"paid"`
	PaymentIntent  string              `json:"payment_intent"`
	Refunded       bool                `json:"refunded"`
	Status         stripe.ChargeStatus `json:"status"`
}

type disputeObject struct {
	ID                 string               `json:"id"`
	Object             string               `json:"object"`
	Amount             int64                `json:"amount"`
	Charge             string               `json:"charge"`
	Created            int64                `json:"created"`
	Currency           string               `json:"currency"`
	IsChargeRefundable bool                 `json:"is_charge_refundable"`
	Livemode           bool                 `json:"livemode"`
	Metadata           map[string]string    `json:"metadata"`
	PaymentIntent      string               `json:"payment_intent"`
	Reason             stripe.DisputeReason `json:"reason"`
	Status             stripe.DisputeStatus `json:"status"`
}

type portalSessionObject struct {
	ID            string    `json:"id"`
	Object        string    `json:"object"`
	Configuration string    `json:"configuration"`
	Created       int64     `json:"created"`
	Customer      string    `json:"customer"`
	Flow          *struct{} `json:"flow"`
	Livemode      bool      `json:"livemode"`
	Locale        *string   `json:"locale"`
	OnBehalfOf    *string   `json:"on_behalf_of"`
	ReturnURL     *string   `json:"return_url"`
	URL           string    `json:"url"`
}

type eventObject struct {
	ID              string           `json:"id"`
	Object          string           `json:"object"`
	APIVersion      string           `json:"api_version"`
	Created         int64            `json:"created"`
	Data            eventData        `json:"data"`
	Livemode        bool             `json:"livemode"`
	PendingWebhooks int              `json:"pending_webhooks"`
	Request         eventRequest     `json:"request"`
	Type            stripe.EventType `json:"type"`
}

type eventData struct {
	Object json.RawMessage `json:"object"`
	// PreviousAttributes is only in *.updated events (and charge.refunded): the members
	// that changed, with their values before.
	PreviousAttributes map[string]any `json:"previous_attributes,omitempty"`
}

// eventRequest is null-valued: every event the fake sends is "automatic" (caused by a
// payment or a test, not by an API request).
type eventRequest struct {
	ID             *string `json:"id"`
	IdempotencyKey *string `json:"idempotency_key"`
}
