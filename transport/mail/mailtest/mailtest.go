// Package mailtest is a real SMTP server for tests (github.com/emersion/go-smtp on
// loopback): it receives what the gateway sends and hands each message over decoded.
package mailtest

import (
	"bytes"
	"encoding/base64"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Mail is one received message.
type Mail struct {
	From    string
	To      []string
	Subject string
	Body    string // the text, its transfer encoding undone
}

// Server is a running SMTP server.
type Server struct {
	Host string
	Port int
	got  chan Mail
	srv  *smtp.Server
}

// Start runs a server on a loopback port until the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{got: make(chan Mail, 64)}
	s.srv = smtp.NewServer(backend{s})
	s.srv.Domain = "mailtest.local"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	addr := ln.Addr().(*net.TCPAddr)
	s.Host, s.Port = addr.IP.String(), addr.Port
	go s.srv.Serve(ln)
	tb.Cleanup(func() { s.srv.Close() })
	return s
}

// Next waits up to 10 s for the next message.
func (s *Server) Next(tb testing.TB) Mail {
	tb.Helper()
	select {
	case m := <-s.got:
		return m
	case <-time.After(10 * time.Second):
		tb.Fatal("no mail arrived within 10 s")
		return Mail{}
	}
}

// None fails the test if a message arrives within d.
func (s *Server) None(tb testing.TB, d time.Duration) {
	tb.Helper()
	select {
	case m := <-s.got:
		tb.Fatalf("unexpected mail to %v: %q", m.To, m.Subject)
	case <-time.After(d):
	}
}

var linkPattern = regexp.MustCompile(`https?://[^\s<>"]+`)

// Link is the one link of the message's body.
func (m Mail) Link(tb testing.TB) string {
	tb.Helper()
	links := linkPattern.FindAllString(m.Body, -1)
	if len(links) != 1 {
		tb.Fatalf("mail %q has %d links, want 1:\n%s", m.Subject, len(links), m.Body)
	}
	return links[0]
}

type backend struct{ s *Server }

func (b backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{s: b.s}, nil }

type session struct {
	s    *Server
	from string
	to   []string
}

func (x *session) Reset()        { x.from, x.to = "", nil }
func (x *session) Logout() error { return nil }
func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.from = from
	return nil
}
func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	var body io.Reader = msg.Body
	switch strings.ToLower(msg.Header.Get("Content-Transfer-Encoding")) {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	}
	text, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	x.s.got <- Mail{From: x.from, To: x.to, Subject: subject, Body: string(bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n")))}
	return nil
}
