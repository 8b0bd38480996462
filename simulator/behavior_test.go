package simulator

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

const hiChat = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`

func TestFailStatusSendsOpenAIErrors(t *testing.T) {
	s, base := startSim(t)
	tests := []struct {
		status, retryAfter int
		stream             bool
		retryHeader, body  string
	}{
		{429, 7, false, "7", `{"error":{"message":"Rate limit reached for requests (simulated). Please try again later.","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`},
		{429, 0, true, "", `{"error":{"message":"Rate limit reached for requests (simulated). Please try again later.","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`},
		{500, 0, false, "", `{"error":{"message":"The server had an error while processing your request (simulated).","type":"server_error","param":null,"code":null}}`},
		{503, 1, true, "1", `{"error":{"message":"The service is temporarily unavailable (simulated). Please try again later.","type":"service_unavailable_error","param":null,"code":null}}`},
		{529, 2, false, "2", `{"error":{"message":"The server is overloaded (simulated). Please try again later.","type":"overloaded_error","param":null,"code":null}}`},
	}
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			s.SetBehavior("down", Behavior{FailStatus: tc.status, RetryAfter: tc.retryAfter})
			body := hiChat
			if tc.stream {
				body = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
			}
			resp, data := post(t, base+"/r/down/v1/chat/completions", body)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := resp.Header.Get("Retry-After"); got != tc.retryHeader {
				t.Errorf("Retry-After %q, want %q", got, tc.retryHeader)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			assertJSON(t, data, tc.body)
		})
	}
	// Other routes are unaffected, and healing the route works at once.
	if resp, _ := post(t, base+"/r/up/v1/chat/completions", hiChat); resp.StatusCode != http.StatusOK {
		t.Errorf("healthy route answered %d", resp.StatusCode)
	}
	s.SetBehavior("down", Behavior{})
	if resp, _ := post(t, base+"/r/down/v1/chat/completions", hiChat); resp.StatusCode != http.StatusOK {
		t.Errorf("healed route answered %d", resp.StatusCode)
	}
}

func TestFailFractionIsExact(t *testing.T) {
	s, base := startSim(t)
	tests := []struct {
		fraction float64
		calls    int
		failing  []int // 1-based call numbers
	}{
		{0.3, 10, []int{4, 7, 10}},
		{0.5, 6, []int{2, 4, 6}},
		{0.25, 8, []int{4, 8}},
		{0, 3, []int{1, 2, 3}}, // a fraction of 0 with FailStatus means always
		{1, 2, []int{1, 2}},
	}
	for _, tc := range tests {
		s.SetBehavior("r", Behavior{FailStatus: http.StatusServiceUnavailable, FailFraction: tc.fraction})
		var failing []int
		for k := 1; k <= tc.calls; k++ {
			resp, _ := post(t, base+"/r/r/v1/chat/completions", hiChat)
			switch resp.StatusCode {
			case http.StatusServiceUnavailable:
				failing = append(failing, k)
			case http.StatusOK:
			default:
				t.Fatalf("unexpected status %d", resp.StatusCode)
			}
		}
		if !reflect.DeepEqual(failing, tc.failing) {
			t.Errorf("fraction %v: failing calls %v, want %v", tc.fraction, failing, tc.failing)
		}
	}
}

func TestFirstByteDelayIsHonoured(t *testing.T) {
	s, base := startSim(t)
	const delay = 150 * time.Millisecond
	s.SetBehavior("slow", Behavior{FirstByteDelay: delay})
	for _, body := range []string{hiChat, `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`} {
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, base+"/r/slow/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer k")
		resp, err := http.DefaultClient.Do(req) // returns once headers arrive
		if err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || elapsed < delay {
			t.Errorf("status %d after %v, want 200 after at least %v", resp.StatusCode, elapsed, delay)
		}
	}
}

func TestFirstByteDelayStopsWhenClientLeaves(t *testing.T) {
	s := New()
	s.SetBehavior("", Behavior{FirstByteDelay: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", strings.NewReader(hiChat))
	req.Header.Set("Authorization", "Bearer k")
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		s.Handler().ServeHTTP(rec, req)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("handler kept waiting after the client went away")
	}
	if rec.Body.Len() != 0 || len(rec.Header()) != 0 {
		t.Errorf("wrote %d bytes and headers %v to a departed client", rec.Body.Len(), rec.Header())
	}
}

func TestSetBehaviorDuringTraffic(t *testing.T) {
	s, base := startSim(t)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.SetBehavior("hot", Behavior{FailStatus: 500, FailFraction: float64(i%4) / 4})
			_ = s.Behavior("hot")
		}
	})
	var traffic sync.WaitGroup
	for range 4 {
		traffic.Go(func() {
			for range 15 {
				resp, _ := post(t, base+"/r/hot/v1/chat/completions", hiChat)
				if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
					t.Errorf("status %d", resp.StatusCode)
				}
				_ = s.LastRequest("hot")
				_ = s.LastHeaders("hot")
			}
		})
	}
	traffic.Wait()
	close(stop)
	wg.Wait()
	if got := s.Calls("hot"); got != 60 {
		t.Errorf("Calls(hot) = %d, want 60", got)
	}
}
