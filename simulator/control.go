package simulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// routeJSON is the control API's view of a route: Behavior in JSON-friendly units, so the
// standalone binary and tests in other processes can steer routes with curl. Durations are in
// milliseconds (video_ms is VideoDuration; 0 means the default, one second; retry_delay_ms
// is RetryDelay; token_lifetime_ms is TokenLifetime, 0 meaning an hour). fail_kind is "",
// "retry_hint" or "quota" (see FailKind). calls, token_grants and last_request only report:
// a PUT ignores them.
type routeJSON struct {
	Route               string  `json:"route"`
	FirstByteMS         int64   `json:"first_byte_ms"`
	TokensPerSecond     float64 `json:"tokens_per_second"`
	FailStatus          int     `json:"fail_status"`
	RetryAfter          int     `json:"retry_after"`
	FailKind            string  `json:"fail_kind"`
	RetryDelayMS        int64   `json:"retry_delay_ms"`
	FailFraction        float64 `json:"fail_fraction"`
	DropAfterChunks     int     `json:"drop_after_chunks"`
	LongLineBytes       int     `json:"long_line_bytes"`
	LongLineAfterChunks int     `json:"long_line_after_chunks"`
	VideoMS             int64   `json:"video_ms"`
	VideoFailFraction   float64 `json:"video_fail_fraction"`
	VideoOutputSecs     int     `json:"video_output_seconds"`
	ImageURL            string  `json:"image_url"`
	TokenLifetimeMS     int64   `json:"token_lifetime_ms"`
	Calls               int64   `json:"calls"`
	TokenGrants         int64   `json:"token_grants"`
	// LastRequest is the last API request the route received; absent before the first.
	LastRequest *lastRequestJSON `json:"last_request,omitempty"`
}

// lastRequestJSON shows a recorded request to a test in another process: the method, the
// request target as received, the headers with credentials masked, and the body (as JSON
// when it is JSON, else as a string).
type lastRequestJSON struct {
	Method  string            `json:"method"`
	URI     string            `json:"uri"`
	Headers map[string]string `json:"headers"`
	Body    any               `json:"body"`
}

// credentialHeaders are masked in the control API's view of a request: the view is for
// asserting what was sent, and a credential's presence is what matters, not its value.
var credentialHeaders = map[string]bool{"Authorization": true, "Api-Key": true, "X-Api-Key": true,
	"X-Goog-Api-Key": true, "X-Amz-Security-Token": true}

// maxLongLine bounds long_line_bytes: what one stream of the simulator may allocate.
const maxLongLine = 64 << 20

// registerControl mounts the control API. {route...} also matches the empty name, so
// /_sim/routes/ addresses the default route "".
func (s *Server) registerControl() {
	s.mux.HandleFunc("GET /_sim/routes/{route...}", s.getRoute)
	s.mux.HandleFunc("PUT /_sim/routes/{route...}", s.putRoute)
}

func (s *Server) getRoute(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("route")
	if strings.Contains(name, "/") {
		writeControlError(w, fmt.Sprintf("route name %q must not contain '/'", name))
		return
	}
	writeJSON(w, http.StatusOK, s.routeView(name))
}

// putRoute replaces the route's behaviour. Fields left out are zero, so a PUT describes the
// whole behaviour and `{}` heals a route. Unknown fields are rejected: a typo such as
// "fail_rate" would otherwise silently leave the route healthy.
func (s *Server) putRoute(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("route")
	if strings.Contains(name, "/") {
		writeControlError(w, fmt.Sprintf("route name %q must not contain '/'", name))
		return
	}
	var in routeJSON
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		writeControlError(w, "invalid route behaviour JSON: "+err.Error())
		return
	}
	if msg := validateRouteJSON(in); msg != "" {
		writeControlError(w, msg)
		return
	}
	s.SetBehavior(name, Behavior{
		FirstByteDelay:      time.Duration(in.FirstByteMS) * time.Millisecond,
		TokensPerSecond:     in.TokensPerSecond,
		FailStatus:          in.FailStatus,
		RetryAfter:          in.RetryAfter,
		FailKind:            FailKind(in.FailKind),
		RetryDelay:          time.Duration(in.RetryDelayMS) * time.Millisecond,
		FailFraction:        in.FailFraction,
		DropAfterChunks:     in.DropAfterChunks,
		LongLineBytes:       in.LongLineBytes,
		LongLineAfterChunks: in.LongLineAfterChunks,
		VideoDuration:       time.Duration(in.VideoMS) * time.Millisecond,
		VideoFailFraction:   in.VideoFailFraction,
		VideoOutputSeconds:  in.VideoOutputSecs,
		ImageURL:            in.ImageURL,
		TokenLifetime:       time.Duration(in.TokenLifetimeMS) * time.Millisecond,
	})
	writeJSON(w, http.StatusOK, s.routeView(name))
}

// validateRouteJSON returns what is wrong with a requested behaviour, or "".
func validateRouteJSON(in routeJSON) string {
	switch {
	case in.FirstByteMS < 0:
		return "first_byte_ms must be >= 0"
	case in.TokensPerSecond < 0:
		return "tokens_per_second must be >= 0"
	case in.FailStatus != 0 && (in.FailStatus < 400 || in.FailStatus > 599):
		return fmt.Sprintf("fail_status must be 0 or 400..599, got %d", in.FailStatus)
	case in.RetryAfter < 0:
		return "retry_after must be >= 0"
	case in.FailKind != "" && !failKinds[FailKind(in.FailKind)]:
		return fmt.Sprintf("fail_kind must be \"\", \"retry_hint\" or \"quota\", got %q", in.FailKind)
	case in.RetryDelayMS < 0:
		return "retry_delay_ms must be >= 0"
	case in.FailFraction < 0 || in.FailFraction > 1:
		return fmt.Sprintf("fail_fraction must be within 0..1, got %v", in.FailFraction)
	case in.DropAfterChunks < 0:
		return "drop_after_chunks must be >= 0"
	case in.LongLineBytes < 0 || in.LongLineBytes > maxLongLine:
		return fmt.Sprintf("long_line_bytes must be within 0..%d, got %d", maxLongLine, in.LongLineBytes)
	case in.LongLineAfterChunks < 0:
		return "long_line_after_chunks must be >= 0"
	case in.VideoMS < 0:
		return "video_ms must be >= 0"
	case in.VideoFailFraction < 0 || in.VideoFailFraction > 1:
		return fmt.Sprintf("video_fail_fraction must be within 0..1, got %v", in.VideoFailFraction)
	case in.VideoOutputSecs < 0:
		return "video_output_seconds must be >= 0"
	case in.TokenLifetimeMS < 0:
		return "token_lifetime_ms must be >= 0"
	}
	return ""
}

func (s *Server) routeView(name string) routeJSON {
	b := s.Behavior(name)
	return routeJSON{
		Route:               name,
		FirstByteMS:         b.FirstByteDelay.Milliseconds(),
		TokensPerSecond:     b.TokensPerSecond,
		FailStatus:          b.FailStatus,
		RetryAfter:          b.RetryAfter,
		FailKind:            string(b.FailKind),
		RetryDelayMS:        b.RetryDelay.Milliseconds(),
		FailFraction:        b.FailFraction,
		DropAfterChunks:     b.DropAfterChunks,
		LongLineBytes:       b.LongLineBytes,
		LongLineAfterChunks: b.LongLineAfterChunks,
		VideoMS:             b.VideoDuration.Milliseconds(),
		VideoFailFraction:   b.VideoFailFraction,
		VideoOutputSecs:     b.VideoOutputSeconds,
		ImageURL:            b.ImageURL,
		TokenLifetimeMS:     b.TokenLifetime.Milliseconds(),
		Calls:               s.Calls(name),
		TokenGrants:         s.TokenGrants(name),
		LastRequest:         s.lastRequestView(name),
	}
}

// lastRequestView is the route's last request for the control API, nil before the first.
func (s *Server) lastRequestView(name string) *lastRequestJSON {
	rt := s.lookup(name)
	if rt == nil {
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.lastMethod == "" {
		return nil
	}
	v := &lastRequestJSON{Method: rt.lastMethod, URI: rt.lastURI, Headers: map[string]string{}, Body: string(rt.lastBody)}
	for k, vals := range rt.lastHeaders {
		v.Headers[k] = strings.Join(vals, ", ")
		if credentialHeaders[k] {
			v.Headers[k] = "(masked)"
		}
	}
	if json.Valid(rt.lastBody) {
		v.Body = json.RawMessage(append([]byte(nil), rt.lastBody...))
	}
	return v
}

func writeControlError(w http.ResponseWriter, msg string) {
	writeOpenAIError(w, apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: msg})
}
