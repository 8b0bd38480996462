// Package upstream calls provider APIs over HTTP: one client with tuned connection pools,
// each provider format's auth and paths, time-outs for connect, first byte and idle stream,
// and the classification of what went wrong.
package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// Client makes upstream calls. It is safe for concurrent use.
type Client struct {
	mu         sync.Mutex
	transports map[time.Duration]*http.Transport // by connect time-out
	auths      map[string]authorizer             // cloud credentials, by credentialKey
}

// New returns a client.
func New() *Client {
	return &Client{transports: map[time.Duration]*http.Transport{}, auths: map[string]authorizer{}}
}

func (c *Client) transport(connect time.Duration) *http.Transport {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.transports[connect]; ok {
		return t
	}
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   connect,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true, // bytes pass through; the gateway reads usage from them
		ForceAttemptHTTP2:     true,
	}
	c.transports[connect] = t
	return t
}

// Request is one attempt against one route.
type Request struct {
	Route    *catalog.Route
	Timeouts catalog.Timeouts
	Path     string // the operation's path on the format's own API, e.g. "/chat/completions"
	Stream   bool   // a streamed answer is asked for (clouds put the mode in the path)
	Body     []byte
	Header   http.Header // extra headers to forward (already filtered)
	// Deadline, when set, ends the attempt, its stream included, with ErrCallTooLong: the
	// call's own limit (server.max_call_duration from its arrival), whatever the attempt.
	Deadline time.Time
}

// Response is a 2xx answer; Body enforces the idle-stream time-out and must be closed.
type Response struct {
	Status int
	Header http.Header
	Body   io.ReadCloser
}

// Do sends the request. Anything but a 2xx answer is an *Error.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	return c.send(ctx, http.MethodPost, req)
}

func (c *Client) send(ctx context.Context, method string, req Request) (*Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	var deadline *time.Timer
	if !req.Deadline.IsZero() {
		left := time.Until(req.Deadline)
		if left <= 0 {
			cancel(nil)
			return nil, &Error{Kind: Canceled, Err: ErrCallTooLong}
		}
		deadline = time.AfterFunc(left, func() { cancel(ErrCallTooLong) })
	}
	stop := func() {
		if deadline != nil {
			deadline.Stop()
		}
		cancel(nil)
	}
	var resp *http.Response
	for retried := false; ; retried = true {
		hreq, err := c.request(ctx, method, req)
		if err != nil {
			stop()
			return nil, &Error{Kind: Misconfigured, Err: err}
		}
		firstByte := time.AfterFunc(req.Timeouts.FirstByte, func() { cancel(errFirstByte) })
		resp, err = c.transport(req.Timeouts.Connect).RoundTrip(hreq)
		firstByte.Stop()
		if err != nil {
			cause := context.Cause(ctx)
			stop()
			if errors.Is(cause, errFirstByte) {
				return nil, &Error{Kind: TimedOut, Err: fmt.Errorf("no answer within %s", req.Timeouts.FirstByte)}
			}
			if ctx.Err() != nil && cause != nil {
				return nil, &Error{Kind: Canceled, Err: cause}
			}
			return nil, &Error{Kind: Unreachable, Err: err}
		}
		// A token refused before it expired was revoked (or the issuer's clock runs ahead):
		// the call is tried once more with a fresh one instead of failing the route.
		if resp.StatusCode == http.StatusUnauthorized && !retried && c.forgetToken(req.Route) {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			continue
		}
		break
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		stop()
		e := statusError(resp, body, time.Now())
		cloudError(req.Route, e)
		return nil, e
	}
	b := newIdleBody(resp.Body, req.Timeouts.IdleStream, cancel)
	b.deadline = deadline
	out := &Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if req.Stream && req.Route.Provider == catalog.ProviderBedrock {
		out.Body = newEventStreamSSE(b, req.Route.Format == catalog.FormatMessages)
		out.Header = resp.Header.Clone()
		out.Header.Set("Content-Type", "text/event-stream")
	}
	return out, nil
}

// request builds the HTTP request of one call: where the route's provider takes it, the
// body as that provider takes it, the route's headers, then its credential (last: a
// signature covers everything else).
func (c *Client) request(ctx context.Context, method string, req Request) (*http.Request, error) {
	rt := req.Route
	h := http.Header{}
	for k, vs := range rt.Headers {
		h[k] = vs
	}
	for k, vs := range req.Header {
		h[k] = vs
	}
	body, err := cloudBody(rt, req.Body, h)
	if err != nil {
		return nil, err
	}
	var r io.Reader = http.NoBody
	if method != http.MethodGet {
		r = bytes.NewReader(body) // sets ContentLength and GetBody
	}
	hreq, err := http.NewRequestWithContext(ctx, method, target(req), r)
	if err != nil {
		return nil, err
	}
	hreq.Header = h
	if method != http.MethodGet {
		hreq.Header.Set("Content-Type", "application/json")
	} else {
		body = nil
	}
	if a := c.authorizerFor(rt); a != nil {
		if err := a.authorize(ctx, hreq, body); err != nil {
			return nil, fmt.Errorf("route %s: %w", rt.ID, err)
		}
	}
	return hreq, nil
}

// ErrCallTooLong is the cause of an attempt cut at its call's Deadline.
var ErrCallTooLong = errors.New("the call ran past its max duration")

var errFirstByte = errors.New("first byte time-out")

// idleBody cancels the call when no byte arrives for the idle time-out.
type idleBody struct {
	rc       io.ReadCloser
	idle     time.Duration
	timer    *time.Timer
	deadline *time.Timer // the call's Deadline, when it has one
	cancel   context.CancelCauseFunc
}

// ErrIdle is the cause of a stream cut for silence.
var ErrIdle = errors.New("upstream stream idle time-out")

func newIdleBody(rc io.ReadCloser, idle time.Duration, cancel context.CancelCauseFunc) *idleBody {
	b := &idleBody{rc: rc, idle: idle, cancel: cancel}
	b.timer = time.AfterFunc(idle, func() { cancel(ErrIdle) })
	return b
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	if b.deadline != nil {
		b.deadline.Stop()
	}
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
