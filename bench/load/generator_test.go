package load

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestIntendedTime(t *testing.T) {
	start := time.Unix(1000, 0)
	for _, c := range []struct {
		i    int64
		rate float64
		want time.Duration
	}{{0, 100, 0}, {1, 100, 10 * time.Millisecond}, {250, 100, 2500 * time.Millisecond}, {3, 3, time.Second}, {7, 4000, 1750 * time.Microsecond}} {
		if got := IntendedTime(start, c.i, c.rate).Sub(start); got != c.want {
			t.Errorf("IntendedTime(%d, %v) = %v, want %v", c.i, c.rate, got, c.want)
		}
	}
}

// The open loop's latency counts from the intended send time: when the first request stalls
// the only slot for 200 ms, the requests meant for 10, 20, ... ms are sent late and their
// latency includes the wait (a closed loop would report them as instant).
func TestOpenLoopCountsFromIntendedTime(t *testing.T) {
	const stall = 200 * time.Millisecond
	var mu sync.Mutex
	sentAt := map[int64]time.Time{}
	ex := ExchangeFunc(func(ctx context.Context, i int64) Outcome {
		mu.Lock()
		sentAt[i] = time.Now()
		mu.Unlock()
		if i == 0 {
			time.Sleep(stall)
		}
		return Outcome{Status: 200}
	})
	res, err := Run(context.Background(), Config{Duration: 500 * time.Millisecond, Rate: 100, MaxInFlight: 1}, ex)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "open" || res.Requests != 50 || res.OK != 50 {
		t.Fatalf("mode %s, %d requests, %d ok; want open, 50, 50", res.Mode, res.Requests, res.OK)
	}
	// Request 1 was meant for 10 ms and could only go at ~200 ms: ~190 ms late. Its latency
	// (and request 2's, 3's, ...) therefore reaches ~190 ms; the max is the stall itself.
	if res.Latency.Max < float64(stall.Microseconds())-1000 {
		t.Errorf("max latency %vµs, want >= ~%v", res.Latency.Max, stall)
	}
	// About 19 requests (those meant for 10..190 ms) queued behind the stall, so more than
	// 10% of the latencies are >= 50 ms: p90 must show it.
	if res.Latency.P90 < 50000 {
		t.Errorf("p90 %vµs: the queueing delay was omitted", res.Latency.P90)
	}
	if res.SendLag == nil || res.SendLag.Max < 150000 {
		t.Errorf("send lag %+v, want a max near 190 ms", res.SendLag)
	}
	// Requests after the backlog cleared are sent on time.
	start := sentAt[0]
	if d := sentAt[40].Sub(start); d < 380*time.Millisecond || d > 480*time.Millisecond {
		t.Errorf("request 40 sent at +%v, want ~400ms", d)
	}
}

// The same stall in a closed loop is one slow request: the others wait for it but are
// timed from their actual send.
func TestClosedLoopCountsFromActualSend(t *testing.T) {
	var n atomic.Int64
	ex := ExchangeFunc(func(ctx context.Context, i int64) Outcome {
		n.Add(1)
		if i == 0 {
			time.Sleep(100 * time.Millisecond)
		} else {
			time.Sleep(time.Millisecond)
		}
		return Outcome{Status: 200}
	})
	res, err := Run(context.Background(), Config{Duration: 300 * time.Millisecond, Concurrency: 1}, ex)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != "closed" || res.Requests != n.Load() || res.SendLag != nil {
		t.Fatalf("%+v", res)
	}
	if res.Latency.P50 > 20000 || res.Latency.Max < 100000 {
		t.Errorf("p50 %v max %v", res.Latency.P50, res.Latency.Max)
	}
}

func TestStatusesAndOKStatus(t *testing.T) {
	ex := ExchangeFunc(func(ctx context.Context, i int64) Outcome {
		switch i % 4 {
		case 0:
			return Outcome{Status: 200}
		case 1:
			return Outcome{Status: 429}
		case 2:
			return Outcome{Err: errors.New("connection refused")}
		}
		return Outcome{Status: 200, Incomplete: true, Err: errors.New("cut")}
	})
	res, err := Run(context.Background(), Config{Duration: 100 * time.Millisecond, Rate: 400, OKStatus: []int{200, 429}}, ex)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 40 || res.Statuses["200"] != 10 || res.Statuses["429"] != 10 || res.Statuses["transport_error"] != 10 || res.Statuses["incomplete_stream"] != 10 {
		t.Fatalf("statuses %v of %d", res.Statuses, res.Requests)
	}
	if res.OK != 20 || res.Errors != 20 || len(res.ErrorSamples) != maxErrorSamples {
		t.Errorf("ok %d errors %d samples %v", res.OK, res.Errors, res.ErrorSamples)
	}
}

func TestHTTPExchangeStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k1" && r.Header.Get("Authorization") != "Bearer k2" {
			w.WriteHeader(401)
			return
		}
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 3 {
			io.WriteString(w, "data: {\"i\":"+string(rune('0'+i))+"}\n\n")
			w.(http.Flusher).Flush()
			time.Sleep(2 * time.Millisecond)
		}
		if string(b) != "cut" {
			io.WriteString(w, "data: [DO")
			w.(http.Flusher).Flush()
			io.WriteString(w, "NE]\n\n")
		}
	}))
	defer srv.Close()
	h := &HTTP{Client: NewClient(4), Req: HTTPRequest{URL: srv.URL, Body: []byte("{}"), Keys: []string{"k1", "k2"}, KeyHeader: "Authorization", StreamEnd: "data: [DONE]"}}
	res, err := Run(context.Background(), Config{Duration: 200 * time.Millisecond, Concurrency: 2}, h)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK == 0 || res.Errors != 0 || res.TTFB == nil {
		t.Fatalf("%v %+v", res, res.Statuses)
	}
	if res.TTFB.P50 >= res.Latency.P50 || res.Latency.P50 < 4000 {
		t.Errorf("ttfb p50 %v, latency p50 %v", res.TTFB.P50, res.Latency.P50)
	}
	h.Req.Body = []byte("cut")
	out := h.Exchange(context.Background(), 0)
	if !out.Incomplete || out.Status != 200 || !strings.Contains(out.Err.Error(), "[DONE]") {
		t.Errorf("cut stream: %+v", out)
	}
	h.Req.Keys = []string{"bad"}
	if out := h.Exchange(context.Background(), 0); out.Status != 401 || out.Incomplete {
		t.Errorf("bad key: %+v", out)
	}
}

func TestIsLoopback(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:8080/v1": true, "http://localhost:1": true, "http://[::1]:80": true,
		"http://10.0.0.1/v1": false, "https://api.example.com/v1": false, "::": false,
	} {
		if IsLoopback(u) != want {
			t.Errorf("IsLoopback(%q) != %v", u, want)
		}
	}
}
