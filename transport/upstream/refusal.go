package upstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// bodySays is what a provider's error body tells the gateway beyond its status.
type bodySays struct {
	message    string        // the provider's message, clipped (operator information)
	billing    bool          // a billing refusal: the operator's quota or credit is gone
	retryDelay time.Duration // Gemini's RetryInfo, rounded up to whole seconds
}

// providerError is the union of the providers' error objects: OpenAI {message, type, code,
// param}; Anthropic {type, message} with details.error_code on a spend limit; Gemini
// {code, message, status, details[]}. Every format is read the same way, so an
// OpenAI-compatible endpoint that relays another provider's error is still understood.
type providerError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Status  string          `json:"status"`
	Details json.RawMessage `json:"details"`
}

// googleDetail is one entry of a Gemini error's details (google.rpc types).
type googleDetail struct {
	Type       string `json:"@type"`
	RetryDelay string `json:"retryDelay"` // RetryInfo: a protobuf Duration, "34.4s"
	Violations []struct {
		QuotaID    string `json:"quotaId"`
		QuotaValue string `json:"quotaValue"`
	} `json:"violations"` // QuotaFailure
	Metadata map[string]string `json:"metadata"` // ErrorInfo
}

// billingCodes are the OpenAI and Anthropic type/code values of a billing refusal.
var billingCodes = map[string]bool{
	"insufficient_quota": true, // OpenAI 429: credit or monthly quota used up
	"billing_not_active": true, // OpenAI: the account's billing is off
	"billing_error":      true, // Anthropic 402
}

func readErrorBody(body []byte) bodySays {
	pe := decodeProviderError(body)
	if pe == nil {
		return bodySays{message: clipMessage(string(body))}
	}
	var google []googleDetail
	var anthropic struct {
		ErrorCode string `json:"error_code"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(pe.Details), []byte("[")) {
		json.Unmarshal(pe.Details, &google)
	} else {
		json.Unmarshal(pe.Details, &anthropic)
	}
	var code string
	json.Unmarshal(pe.Code, &code)

	said := bodySays{message: clipMessage(pe.Message)}
	for _, d := range google {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			said.retryDelay = max(said.retryDelay, parseProtoDuration(d.RetryDelay))
		}
	}
	switch {
	case billingCodes[pe.Type] || billingCodes[code]:
		said.billing = true
	case containsFold(pe.Message, "credit balance is too low"): // Anthropic, as a 400 or 403
		said.billing = true
	case pe.Type == "rate_limit_error" && anthropic.ErrorCode != "": // Anthropic's spend limit
		said.billing = true
	case pe.Status == "FAILED_PRECONDITION" && containsFold(pe.Message, "billing"):
		said.billing = true // Gemini: free tier unavailable here, billing not enabled
	case pe.Status == "RESOURCE_EXHAUSTED":
		said.billing = quotaGone(google)
	}
	return said
}

// decodeProviderError reads {"error": {...}}, or the JSON array Gemini's non-SSE stream
// endpoint wraps it in; nil when the body is neither.
func decodeProviderError(body []byte) *providerError {
	body = bytes.TrimSpace(body)
	var env struct {
		Error *providerError `json:"error"`
	}
	if bytes.HasPrefix(body, []byte("[")) {
		var arr []struct {
			Error *providerError `json:"error"`
		}
		if json.Unmarshal(body, &arr) != nil || len(arr) == 0 {
			return nil
		}
		return arr[0].Error
	}
	if json.Unmarshal(body, &env) != nil {
		return nil
	}
	return env.Error
}

// quotaGone reports a Gemini quota that no rate window will refill soon: a per-day quota,
// or a quota of zero (the model is not on the project's tier at all). Per-minute quotas are
// rate limits.
func quotaGone(details []googleDetail) bool {
	for _, d := range details {
		for _, v := range d.Violations {
			if containsFold(v.QuotaID, "PerDay") || v.QuotaValue == "0" {
				return true
			}
		}
		if containsFold(d.Metadata["quota_limit"], "PerDay") || d.Metadata["quota_limit_value"] == "0" {
			return true
		}
	}
	return false
}

// parseProtoDuration reads a protobuf Duration in its JSON form ("34.4s", "3s"), rounding a
// fraction up to the next whole second: the route must not come back early.
func parseProtoDuration(v string) time.Duration {
	num, ok := strings.CutSuffix(strings.TrimSpace(v), "s")
	if !ok {
		return 0
	}
	whole, frac, _ := strings.Cut(num, ".")
	secs, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || secs < 0 || strings.Trim(frac, "0123456789") != "" {
		return 0
	}
	if strings.Trim(frac, "0") != "" {
		secs++
	}
	if secs >= int64(maxRetryHint/time.Second) {
		return maxRetryHint
	}
	return time.Duration(secs) * time.Second
}

// maxMessage bounds a provider message kept for operators.
const maxMessage = 300

// clipMessage makes a provider message one printable line of at most maxMessage bytes.
func clipMessage(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxMessage {
		return s
	}
	cut := maxMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
