package node

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// DefaultTLSPollEvery is how often the certificate files are read for a change.
const DefaultTLSPollEvery = 2 * time.Second

// certs is the public listener's certificate: the pair the files held when last read well,
// handed to each new TLS handshake, so a rotation reaches new connections while open ones
// keep theirs. A pair that does not load leaves the current one serving.
type certs struct {
	files catalog.TLSFiles
	log   *slog.Logger
	pair  atomic.Pointer[tls.Certificate]
	mu    sync.Mutex // one read at a time; guards seen
	// seen is what the files held at the last read, good or bad (or why they could not be
	// read): unchanged files are neither parsed nor complained about again until they change
	// (or a SIGHUP asks).
	seen     []byte
	stop     chan struct{}
	stopOnce sync.Once
}

// loadCerts reads the listener's certificate: serve's flags (cfg.TLS) win over the catalog's
// server.tls. Nil without either (plain HTTP). A pair that does not load stops the start.
func loadCerts(cfg Config, cat *catalog.Catalog) (*certs, error) {
	files := cfg.TLS
	if !files.Enabled() {
		files = cat.Server.TLS
	}
	if !files.Enabled() {
		if cat.Server.HSTS > 0 {
			return nil, errors.New("server.hsts: the listener has no TLS (set server.tls or serve --tls-cert/--tls-key); behind a TLS proxy, let the proxy send Strict-Transport-Security")
		}
		return nil, nil
	}
	return newCerts(files, cfg.Logger)
}

// newCerts reads a certificate pair that new handshakes are then given (watch keeps it fresh).
func newCerts(files catalog.TLSFiles, logger *slog.Logger) (*certs, error) {
	c := &certs{files: files, log: logger, stop: make(chan struct{})}
	pair, content, err := readPair(files, time.Now())
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	c.pair.Store(pair)
	c.seen = content
	c.logLoaded(pair)
	return c, nil
}

// adminCertLoader is the admin listener's certificate loader (Config.AdminTLSConfig's
// default): the public listener's certs when the files are the same, else certs of their
// own, watched like the public ones (from when the node serves) and closed with the node.
func (n *Node) adminCertLoader(public *certs) func(catalog.TLSFiles) (*tls.Config, error) {
	return func(files catalog.TLSFiles) (*tls.Config, error) {
		if public != nil && public.files == files {
			return public.config(), nil
		}
		c, err := newCerts(files, n.cfg.Logger)
		if err != nil {
			return nil, err
		}
		n.adminCerts = c // watched once the node serves
		return c.config(), nil
	}
}

// readPair reads and checks the certificate chain and key: the key must be the
// certificate's, and the certificate not yet expired. content is both files' bytes.
func readPair(files catalog.TLSFiles, now time.Time) (pair *tls.Certificate, content []byte, err error) {
	certPEM, err := os.ReadFile(files.CertFile)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(files.KeyFile)
	if err != nil {
		return nil, nil, err
	}
	content = append(append(certPEM, 0), keyPEM...)
	p, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, content, fmt.Errorf("%s and %s: %w", files.CertFile, files.KeyFile, err)
	}
	if now.After(p.Leaf.NotAfter) {
		return nil, content, fmt.Errorf("%s expired at %s", files.CertFile, p.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return &p, content, nil
}

// reload reads the files again; their pair serves from the next handshake on. Unless force
// (a SIGHUP), files unchanged since the last read are left alone.
func (c *certs) reload(force bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	pair, content, err := readPair(c.files, time.Now())
	state := content
	if state == nil { // unreadable: the same error is not logged again at every read
		state = []byte(err.Error())
	}
	if !force && bytes.Equal(state, c.seen) {
		return
	}
	c.seen = state
	if err != nil {
		// A rotation that writes the certificate and then the key passes through a mismatch;
		// the next read, once the key is written too, takes the new pair.
		c.log.Error("TLS certificate not reloaded; the current one keeps serving", "cert_file", c.files.CertFile, "key_file", c.files.KeyFile, "err", err)
		return
	}
	c.pair.Store(pair)
	c.logLoaded(pair)
}

func (c *certs) logLoaded(p *tls.Certificate) {
	c.log.Info("TLS certificate loaded", "cert_file", c.files.CertFile, "subject", p.Leaf.Subject.String(),
		"names", p.Leaf.DNSNames, "not_after", p.Leaf.NotAfter.UTC().Format(time.RFC3339))
}

// watch reads the files every interval (DefaultTLSPollEvery when zero) until close.
func (c *certs) watch(every time.Duration) {
	if c == nil {
		return
	}
	if every <= 0 {
		every = DefaultTLSPollEvery
	}
	supervise.Loop("node: TLS certificate watch", c.stop, func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				c.reload(false)
			}
		}
	})
}

func (c *certs) close() {
	if c != nil {
		c.stopOnce.Do(func() { close(c.stop) })
	}
}

// listener serves ln over TLS 1.2+ with HTTP/2 offered first; ln itself without TLS.
func (c *certs) listener(ln net.Listener) net.Listener {
	if c == nil {
		return ln
	}
	return tls.NewListener(ln, c.config())
}

// config is TLS 1.2+ with HTTP/2 offered first, each handshake given the current pair.
func (c *certs) config() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{"h2", "http/1.1"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.pair.Load(), nil },
	}
}

// scheme is the listener's URL scheme.
func (c *certs) scheme() string {
	if c == nil {
		return "http"
	}
	return "https"
}

// withHSTS adds Strict-Transport-Security (server.hsts, read at start) to every answer
// over this listener's TLS. Over plain HTTP browsers ignore it, and behind a TLS proxy the
// proxy is the one to send it.
func withHSTS(maxAge time.Duration, next http.Handler) http.Handler {
	if maxAge <= 0 {
		return next
	}
	value := "max-age=" + strconv.FormatInt(int64(maxAge/time.Second), 10)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", value)
		}
		next.ServeHTTP(w, r)
	})
}
