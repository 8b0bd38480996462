package upstream

import (
	"net/http"
	"testing"
	"time"
)

func TestClassification(t *testing.T) {
	cases := []struct {
		status    int
		retry     string
		kind      Kind
		wait      time.Duration
		retryable bool
	}{
		{429, "7", RateLimited, 7 * time.Second, true},
		{429, "", RateLimited, 0, true},
		{429, "soon", RateLimited, 0, true},
		{500, "", ServerError, 0, true},
		{502, "", ServerError, 0, true},
		{503, "", ServerError, 0, true},
		{529, "", ServerError, 0, true},
		{401, "", ServerError, 0, true}, // the route's credential is wrong, not the client's request
		{403, "", ServerError, 0, true},
		{404, "", ServerError, 0, true},
		{408, "", ServerError, 0, true},
		{400, "", ClientError, 0, false},
		{413, "", ClientError, 0, false},
		{422, "", ClientError, 0, false},
	}
	for _, c := range cases {
		resp := &http.Response{StatusCode: c.status, Header: http.Header{}}
		if c.retry != "" {
			resp.Header.Set("Retry-After", c.retry)
		}
		e := statusError(resp, nil)
		if e.Kind != c.kind || e.RetryAfter != c.wait || e.Retryable() != c.retryable {
			t.Errorf("%d %q: kind %v wait %v retryable %v", c.status, c.retry, e.Kind, e.RetryAfter, e.Retryable())
		}
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	if got := parseRetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); got != 90*time.Second {
		t.Fatalf("got %v", got)
	}
	if got := parseRetryAfter(now.Add(-time.Minute).Format(http.TimeFormat), now); got != 0 {
		t.Fatalf("past date: %v", got)
	}
}
