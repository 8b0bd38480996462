package load

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// HTTPRequest is the request a run repeats.
type HTTPRequest struct {
	Method string // default POST
	URL    string
	Header http.Header
	Body   []byte
	// Keys are API keys; request i sends Keys[i % len(Keys)] in KeyHeader, so one run can
	// spread over many accounts. KeyHeader "Authorization" sends "Bearer <key>".
	Keys      []string
	KeyHeader string
	// StreamEnd, if set, must appear in the body for the answer to count as complete (the
	// stream's terminator: "data: [DONE]", "event: message_stop", ...).
	StreamEnd string
}

// HTTP exchanges HTTPRequest over Client.
type HTTP struct {
	Client *http.Client
	Req    HTTPRequest
}

// NewClient is an HTTP/1.1 client for load: no proxy from the environment, no compression,
// and enough idle connections per host that a run never churns them.
func NewClient(conns int) *http.Client {
	conns = max(conns, 16)
	return &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns * 2,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}, Timeout: 2 * time.Minute}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// Exchange sends request i and reads the whole answer.
func (h *HTTP) Exchange(ctx context.Context, i int64) Outcome {
	method := h.Req.Method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if h.Req.Body != nil {
		body = bytes.NewReader(h.Req.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.Req.URL, body)
	if err != nil {
		return Outcome{Err: err}
	}
	for k, v := range h.Req.Header {
		req.Header[k] = v
	}
	if n := len(h.Req.Keys); n > 0 {
		key := h.Req.Keys[int(i%int64(n))]
		if h.Req.KeyHeader == "" || http.CanonicalHeaderKey(h.Req.KeyHeader) == "Authorization" {
			req.Header.Set("Authorization", "Bearer "+key)
		} else {
			req.Header.Set(h.Req.KeyHeader, key)
		}
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		return Outcome{Err: err}
	}
	defer resp.Body.Close()
	out := Outcome{Status: resp.StatusCode}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	end := []byte(h.Req.StreamEnd)
	found := len(end) == 0
	var carry []byte // the last len(end)-1 bytes, so a terminator split across reads is found
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if out.FirstByte.IsZero() {
				out.FirstByte = time.Now()
			}
			out.Bytes += int64(n)
			if !found {
				found = bytes.Contains(buf[:n], end) || (len(carry) > 0 && bytes.Contains(append(carry, buf[:min(n, len(end))]...), end))
				if k := len(end) - 1; n >= k {
					carry = append(carry[:0], buf[n-k:n]...)
				} else {
					carry = append(carry, buf[:n]...)
					if len(carry) > k {
						carry = carry[len(carry)-k:]
					}
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			out.Err = rerr
			out.Incomplete = true
			break
		}
	}
	out.Done = time.Now()
	if !found && resp.StatusCode == http.StatusOK {
		out.Incomplete = true
		if out.Err == nil {
			out.Err = fmt.Errorf("stream ended without %q", h.Req.StreamEnd)
		}
	}
	return out
}

// IsLoopback reports whether rawURL's host is a loopback address or "localhost".
func IsLoopback(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
