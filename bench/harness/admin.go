package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// controlClient talks to the admin and simulator control APIs (never proxied).
var controlClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 64}}

func callJSON(ctx context.Context, method, url, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := controlClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, bytes.TrimSpace(b))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// CreateAccountKey creates an account on plan through the gateway's admin API (at adminURL,
// its admin listener) and returns the secret of a new key on it.
func CreateAccountKey(ctx context.Context, adminURL, adminToken, email, plan string) (string, error) {
	var acct struct {
		ID string `json:"id"`
	}
	if err := callJSON(ctx, http.MethodPost, adminURL+"/admin/v1/accounts", adminToken,
		map[string]string{"email": email, "plan": plan}, &acct); err != nil {
		return "", err
	}
	var key struct {
		Secret string `json:"key"`
	}
	if err := callJSON(ctx, http.MethodPost, adminURL+"/admin/v1/accounts/"+acct.ID+"/keys", adminToken,
		map[string]string{"name": "bench"}, &key); err != nil {
		return "", err
	}
	if key.Secret == "" {
		return "", fmt.Errorf("admin API created a key on %s without returning its secret", acct.ID)
	}
	return key.Secret, nil
}

// CreateAccounts creates n accounts with one key each, workers at a time, and returns the
// keys in creation order. progress, if set, is called now and then with the count so far.
func CreateAccounts(ctx context.Context, adminURL, adminToken, plan, emailPrefix string, n, workers int, progress func(int)) ([]string, error) {
	keys := make([]string, n)
	var next, done atomic.Int64
	var firstErr error
	var once sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				k, err := CreateAccountKey(ctx, adminURL, adminToken, fmt.Sprintf("%s-%05d@bench.invalid", emailPrefix, i), plan)
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				keys[i] = k
				if d := done.Add(1); progress != nil && d%1000 == 0 {
					progress(int(d))
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, fmt.Errorf("creating %d accounts: %w", n, firstErr)
	}
	return keys, nil
}

// SimRoute is the simulator's control view of a route.
type SimRoute struct {
	FirstByteMS     int64   `json:"first_byte_ms"`
	TokensPerSecond float64 `json:"tokens_per_second"`
	FailStatus      int     `json:"fail_status"`
	RetryAfter      int     `json:"retry_after"`
	FailFraction    float64 `json:"fail_fraction"`
	DropAfterChunks int     `json:"drop_after_chunks"`
}

// SetSimRoute replaces a simulator route's behaviour.
func SetSimRoute(ctx context.Context, simURL, route string, b SimRoute) error {
	return callJSON(ctx, http.MethodPut, simURL+"/_sim/routes/"+route, "", b, nil)
}

// SimCalls is how many requests reached a simulator route so far.
func SimCalls(ctx context.Context, simURL, route string) (int64, error) {
	var v struct {
		Calls int64 `json:"calls"`
	}
	err := callJSON(ctx, http.MethodGet, simURL+"/_sim/routes/"+route, "", nil, &v)
	return v.Calls, err
}
