// Package load is the bench harness's load generator: a closed loop (N connections, each
// sending its next request when the last one ends) and an open loop (requests sent at fixed
// intended times whatever the server does, latency measured from the intended time so a
// stalled server cannot hide its stall: no coordinated omission), with HdrHistogram-style
// latency histograms, error counts by status, and for streams the time to first byte.
package load

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Outcome is what one exchange reports back to the generator.
type Outcome struct {
	Status     int       // HTTP status; 0 when the exchange failed before a response
	Err        error     // transport or read error
	FirstByte  time.Time // when the first byte of the body arrived (zero: none, or not measured)
	Done       time.Time // when the last byte arrived (zero: the generator uses time.Now())
	Incomplete bool      // a stream ended without its terminator
	Bytes      int64     // body bytes read
}

// Exchanger performs request number i (0, 1, 2, ... within a run). It must be safe for
// concurrent use.
type Exchanger interface {
	Exchange(ctx context.Context, i int64) Outcome
}

// ExchangeFunc adapts a function to Exchanger.
type ExchangeFunc func(ctx context.Context, i int64) Outcome

// Exchange calls f.
func (f ExchangeFunc) Exchange(ctx context.Context, i int64) Outcome { return f(ctx, i) }

// Config is one run. Rate > 0 selects the open loop; otherwise the closed loop with
// Concurrency connections.
type Config struct {
	Duration    time.Duration
	Concurrency int     // closed loop: requests in flight (default 1)
	Rate        float64 // open loop: requests per second, sent at start + i/Rate
	// MaxInFlight caps the open loop's requests in flight (default 1024). A request whose
	// intended time comes while the cap is reached is sent late, and its latency still
	// counts from its intended time.
	MaxInFlight int
	// OKStatus lists the statuses that count as correct answers (default: 200 only). A
	// correct answer must also be complete (streams need their terminator).
	OKStatus []int
}

// Result is one run's measurements. Latencies are of correct answers; every answer is
// counted in Statuses.
type Result struct {
	Mode        string  `json:"mode"` // "closed" or "open"
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"offered_rps"` // open loop only
	DurationS   float64 `json:"duration_s"`  // first send to last answer
	Requests    int64   `json:"requests"`
	OK          int64   `json:"ok"`
	Errors      int64   `json:"errors"`
	// Statuses counts answers by HTTP status ("200", "429", ...), plus "transport_error" for
	// exchanges without a status and "incomplete_stream" for streams cut short (those are
	// not also counted under their status).
	Statuses     map[string]int64 `json:"statuses"`
	ErrorSamples []string         `json:"error_samples"`
	Throughput   float64          `json:"throughput_rps"` // correct answers per second
	BytesPerReq  float64          `json:"bytes_per_request"`
	// Latency is from the intended send time (open loop) or the actual send time (closed
	// loop) to the last byte; TTFB to the first body byte (streams).
	Latency Summary  `json:"latency_us"`
	TTFB    *Summary `json:"ttfb_us"`
	// SendLag is how late the open loop sent requests after their intended time (the
	// generator's own delay, or the in-flight cap); nil for the closed loop.
	SendLag *Summary `json:"send_lag_us"`

	LatencyHist *Histogram `json:"-"`
	TTFBHist    *Histogram `json:"-"`
}

// Run drives ex for cfg.Duration and returns what it measured. Cancelling ctx ends the run
// early (in-flight requests see the cancellation).
func Run(ctx context.Context, cfg Config, ex Exchanger) (*Result, error) {
	if cfg.Duration <= 0 {
		return nil, errors.New("load: duration must be positive")
	}
	if cfg.Rate < 0 {
		return nil, errors.New("load: rate must not be negative")
	}
	r := newRecorder(cfg)
	if cfg.Rate > 0 {
		r.res.Mode, r.res.Rate = "open", cfg.Rate
		openLoop(ctx, cfg, ex, r)
	} else {
		r.res.Mode = "closed"
		r.res.Concurrency = max(cfg.Concurrency, 1)
		closedLoop(ctx, cfg, ex, r)
	}
	return r.finish(), nil
}

// closedLoop runs Concurrency workers; each sends its next request as soon as its last
// answer has been read, until the duration is over.
func closedLoop(ctx context.Context, cfg Config, ex Exchanger, r *recorder) {
	n := max(cfg.Concurrency, 1)
	r.start = time.Now()
	deadline := r.start.Add(cfg.Duration)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				out := ex.Exchange(ctx, next.Add(1)-1)
				r.record(t0, t0, out)
			}
		})
	}
	wg.Wait()
}

// IntendedTime is when the open loop means to send request i: start + i/rate.
func IntendedTime(start time.Time, i int64, rate float64) time.Time {
	return start.Add(time.Duration(float64(i) * float64(time.Second) / rate))
}

// openLoop sends request i at IntendedTime(start, i, rate) for every intended time within
// the duration, each on its own goroutine, whatever the answers are doing. If the
// generator falls behind (or MaxInFlight is reached) it sends the overdue requests at once;
// their latency still counts from their intended time.
func openLoop(ctx context.Context, cfg Config, ex Exchanger, r *recorder) {
	limit := cfg.MaxInFlight
	if limit <= 0 {
		limit = 1024
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	r.start = time.Now()
	end := r.start.Add(cfg.Duration)
	for i := int64(0); ; i++ {
		intended := IntendedTime(r.start, i, cfg.Rate)
		if !intended.Before(end) {
			break
		}
		if d := time.Until(intended); d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
			}
		}
		if ctx.Err() != nil {
			break
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(i int64, intended time.Time) {
			defer wg.Done()
			sent := time.Now()
			out := ex.Exchange(ctx, i)
			<-sem
			r.record(intended, sent, out)
		}(i, intended)
	}
	wg.Wait()
}

// recorder collects outcomes from concurrent exchanges.
type recorder struct {
	cfg   Config
	ok    map[int]bool
	start time.Time

	mu       sync.Mutex
	res      Result
	lat      *Histogram
	ttfb     *Histogram
	lag      *Histogram
	statuses map[string]int64
	last     time.Time
	bytes    int64
}

func newRecorder(cfg Config) *recorder {
	ok := map[int]bool{}
	for _, s := range cfg.OKStatus {
		ok[s] = true
	}
	if len(ok) == 0 {
		ok[200] = true
	}
	return &recorder{cfg: cfg, ok: ok, lat: NewHistogram(), ttfb: NewHistogram(), lag: NewHistogram(), statuses: map[string]int64{}}
}

const maxErrorSamples = 5

// record accounts one exchange: intended is when it was meant to be sent (the latency
// origin), sent when it was.
func (r *recorder) record(intended, sent time.Time, out Outcome) {
	done := out.Done
	if done.IsZero() {
		done = time.Now()
	}
	var key string
	switch {
	case out.Status == 0:
		key = "transport_error"
	case out.Incomplete:
		key = "incomplete_stream"
	default:
		key = strconv.Itoa(out.Status)
	}
	good := out.Status != 0 && !out.Incomplete && out.Err == nil && r.ok[out.Status]
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statuses[key]++
	r.res.Requests++
	r.bytes += out.Bytes
	if done.After(r.last) {
		r.last = done
	}
	if r.res.Mode == "open" {
		r.lag.RecordDuration(sent.Sub(intended))
	}
	if !good {
		r.res.Errors++
		if len(r.res.ErrorSamples) < maxErrorSamples {
			msg := key
			if out.Err != nil {
				msg += ": " + out.Err.Error()
			}
			r.res.ErrorSamples = append(r.res.ErrorSamples, msg)
		}
		return
	}
	r.res.OK++
	r.lat.RecordDuration(done.Sub(intended))
	if !out.FirstByte.IsZero() {
		r.ttfb.RecordDuration(out.FirstByte.Sub(intended))
	}
}

func (r *recorder) finish() *Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.res
	res.Statuses = r.statuses
	if res.ErrorSamples == nil {
		res.ErrorSamples = []string{}
	}
	elapsed := r.last.Sub(r.start)
	if elapsed < r.cfg.Duration {
		elapsed = r.cfg.Duration
	}
	res.DurationS = round3(elapsed.Seconds())
	res.Throughput = round1(float64(res.OK) / elapsed.Seconds())
	if res.Requests > 0 {
		res.BytesPerReq = round1(float64(r.bytes) / float64(res.Requests))
	}
	res.Latency = r.lat.Summarize()
	res.LatencyHist = r.lat
	if r.ttfb.Count() > 0 {
		s := r.ttfb.Summarize()
		res.TTFB, res.TTFBHist = &s, r.ttfb
	}
	if res.Mode == "open" {
		s := r.lag.Summarize()
		res.SendLag = &s
	}
	return &res
}

// StatusKeys returns the keys of a Statuses map in a stable order.
func StatusKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// String is a one-line description of the result.
func (r *Result) String() string {
	s := fmt.Sprintf("%s: %d requests, %d ok, %.1f ok/s, p50 %.0fµs p99 %.0fµs max %.0fµs",
		r.Mode, r.Requests, r.OK, r.Throughput, r.Latency.P50, r.Latency.P99, r.Latency.Max)
	if r.Errors > 0 {
		s += fmt.Sprintf(", errors %v", r.Statuses)
	}
	return s
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }
func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }
