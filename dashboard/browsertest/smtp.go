package browsertest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mail is one message the SMTP server received.
type Mail struct {
	From string
	To   []string
	Raw  []byte // as sent, headers and body
}

// MailServer is a real SMTP server on a loopback port that keeps every message it receives
// for the test to read. With Username set it offers AUTH PLAIN (over plain TCP: loopback
// only) and refuses mail from a client that has not authenticated.
type MailServer struct {
	Addr     string // host:port
	Host     string
	Port     int
	Username string
	Password string

	srv      *smtp.Server
	mu       sync.Mutex
	messages []Mail
	arrived  chan struct{} // closed and replaced at each message
}

// StartMailServer starts a server without authentication; the test's cleanup stops it.
func StartMailServer(tb testing.TB) *MailServer {
	return StartMailServerWithAuth(tb, "", "")
}

// StartMailServerWithAuth starts a server that requires AUTH PLAIN with these credentials
// (none when username is empty).
func StartMailServerWithAuth(tb testing.TB, username, password string) *MailServer {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	m := &MailServer{Addr: ln.Addr().String(), Host: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port,
		Username: username, Password: password, arrived: make(chan struct{})}
	m.srv = smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailSession{server: m}, nil }))
	m.srv.Domain = "localhost"
	m.srv.AllowInsecureAuth = true
	m.srv.MaxMessageBytes = 1 << 20
	m.srv.ReadTimeout = 30 * time.Second
	m.srv.WriteTimeout = 30 * time.Second
	go m.srv.Serve(ln)
	tb.Cleanup(func() { m.srv.Close() })
	return m
}

// Messages are the messages received so far, oldest first.
func (m *MailServer) Messages() []Mail {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Mail(nil), m.messages...)
}

// WaitFor waits up to timeout for a message to rcpt and returns the first one.
func (m *MailServer) WaitFor(rcpt string, timeout time.Duration) (Mail, error) {
	deadline := time.After(timeout)
	for {
		m.mu.Lock()
		arrived := m.arrived
		for _, msg := range m.messages {
			for _, to := range msg.To {
				if strings.EqualFold(to, rcpt) {
					m.mu.Unlock()
					return msg, nil
				}
			}
		}
		m.mu.Unlock()
		select {
		case <-arrived:
		case <-deadline:
			return Mail{}, fmt.Errorf("no mail to %s within %s (%d messages to others)", rcpt, timeout, len(m.Messages()))
		}
	}
}

func (m *MailServer) keep(msg Mail) {
	m.mu.Lock()
	m.messages = append(m.messages, msg)
	close(m.arrived)
	m.arrived = make(chan struct{})
	m.mu.Unlock()
}

type mailSession struct {
	server *MailServer
	authed bool
	from   string
	to     []string
}

var errBadCredentials = &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}

var errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}

func (s *mailSession) AuthMechanisms() []string {
	if s.server.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *mailSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != s.server.Username || password != s.server.Password {
			return errBadCredentials
		}
		s.authed = true
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	if s.server.Username != "" && !s.authed {
		return errAuthRequired
	}
	s.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.server.keep(Mail{From: s.from, To: s.to, Raw: raw})
	return nil
}

func (s *mailSession) Reset()        { s.from, s.to = "", nil }
func (s *mailSession) Logout() error { return nil }

// Header is the message's decoded header field (Subject: "=?utf-8?q?…?=" comes back as text).
func (m Mail) Header(name string) string {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return ""
	}
	v := msg.Header.Get(name)
	if d, err := new(mime.WordDecoder).DecodeHeader(v); err == nil {
		return d
	}
	return v
}

// Text is the message's text: its text/plain part (else its first part), with the
// transfer encoding (quoted-printable, base64) undone.
func (m Mail) Text() (string, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return "", err
	}
	return partText(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
}

func partText(contentType, encoding string, body io.Reader) (string, error) {
	media, params, err := mime.ParseMediaType(contentType)
	if contentType == "" {
		media, err = "text/plain", nil
	}
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(media, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		var first string
		for i := 0; ; i++ {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return first, nil
			}
			if err != nil {
				return "", err
			}
			text, err := partText(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p)
			if err != nil {
				return "", err
			}
			if pm, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); pm == "text/plain" {
				return text, nil
			}
			if i == 0 {
				first = text
			}
		}
	}
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64Reader(body)
	}
	raw, err := io.ReadAll(body)
	return string(raw), err
}

var linkPattern = regexp.MustCompile(`https?://[^\s<>"']+`)

// Link is the first URL in the message's text whose path contains pathPart
// ("/auth/verify", "/dashboard/reset").
func (m Mail) Link(pathPart string) (string, error) {
	text, err := m.Text()
	if err != nil {
		return "", err
	}
	for _, u := range linkPattern.FindAllString(text, -1) {
		if strings.Contains(u, pathPart) {
			return strings.TrimRight(u, ".,;:)]"), nil
		}
	}
	return "", fmt.Errorf("no link with %q in the mail:\n%s", pathPart, text)
}

// base64Reader decodes a base64 body whose lines are wrapped (mail wraps them at 76).
func base64Reader(r io.Reader) io.Reader {
	return base64.NewDecoder(base64.StdEncoding, newlineStripper{r})
}

type newlineStripper struct{ r io.Reader }

func (s newlineStripper) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	kept := strings.NewReplacer("\r", "", "\n", "").Replace(string(p[:n]))
	return copy(p, kept), err
}
