package billing

import "strings"

// The idempotency keys of the credit grants a Stripe payment makes: a purchase's, and a
// refund's or a dispute's reversal. The credit history reads them back (Reference).
const (
	purchaseKeyPrefix = "stripe:"
	refundKeyPrefix   = "stripe:refund:"
	disputeKeyPrefix  = "stripe:dispute:"
)

// Reference says what a credit grant's key was made for: a purchase ("top_up" and the
// Checkout Session), a refund ("refund" and the charge) or a dispute ("refund" and the
// dispute); ok is false for a grant Stripe did not make (an operator's top-up, a charge).
func Reference(key string) (kind, ref string, ok bool) {
	switch {
	case strings.HasPrefix(key, refundKeyPrefix):
		ref, _, _ = strings.Cut(strings.TrimPrefix(key, refundKeyPrefix), ":")
		return "refund", ref, true
	case strings.HasPrefix(key, disputeKeyPrefix):
		return "refund", strings.TrimPrefix(key, disputeKeyPrefix), true
	case strings.HasPrefix(key, purchaseKeyPrefix):
		return "top_up", strings.TrimPrefix(key, purchaseKeyPrefix), true
	}
	return "", "", false
}
