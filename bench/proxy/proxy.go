// Package proxy is the bench's floor: a plain Go reverse proxy with a tuned transport, the
// least work one HTTP hop can do (no auth, no routing, no billing, no logging). The gateway's
// added latency and CPU per request are read against it.
package proxy

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// Transport is the upstream transport: HTTP/1.1 keep-alive with enough idle connections per
// host that a saturating run never closes and reopens them, no compression, no
// environment proxy.
func Transport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2048,
		MaxIdleConnsPerHost: 1024,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
}

// New returns a reverse proxy to upstream (a base URL such as http://127.0.0.1:9090):
// a request for /r/x/v1/chat/completions goes to upstream + /r/x/v1/chat/completions.
// FlushInterval -1 flushes every write at once, so streams pass through unbuffered.
func New(upstream *url.URL) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.Out.Host = upstream.Host
		},
		Transport:     Transport(),
		FlushInterval: -1,
		ErrorLog:      log.New(discard{}, "", 0),
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Serve runs the proxy on ln until ctx ends.
func Serve(ctx context.Context, ln net.Listener, upstream *url.URL) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	rp := New(upstream)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// Without full duplex the HTTP/1 server closes the inbound body as soon as the
		// response headers are written, and the transport's final read of the outbound body
		// (forwarded from it) then fails and tears down the upstream connection mid-stream:
		// golang/go#40747. Full duplex keeps the body readable until the handler returns.
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(sctx)
		if e := <-errc; !errors.Is(e, http.ErrServerClosed) && err == nil {
			err = e
		}
		return err
	}
}
