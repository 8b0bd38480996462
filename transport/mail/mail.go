// Package mail sends the gateway's own e-mail (sign-up verification, password reset):
// through an SMTP server the operator configures, or, in dev mode, into the log.
package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Message is one plain-text mail. Link is the one link in Text, for the dev mailer's log.
type Message struct {
	To, Subject, Text, Link string
}

// Mailer sends a message.
type Mailer interface {
	Send(ctx context.Context, m Message) error
}

// Security is how the SMTP connection is protected.
const (
	StartTLS = "starttls" // plain connection upgraded with STARTTLS (required), port 587 by default
	TLS      = "tls"      // TLS from the first byte (SMTPS), port 465 by default
	None     = "none"     // no encryption: a relay on the same host or network only
)

// Config is the SMTP server mail goes out through (the config file's auth.mail).
type Config struct {
	Host     string
	Port     int
	Security string // StartTLS, TLS or None
	Username string // "" = no authentication
	// PasswordEnv names the environment variable holding the SMTP password, so the
	// password is in no file.
	PasswordEnv string
	From        string
}

// SMTP sends through an SMTP server with github.com/wneessen/go-mail, a connection per
// message (sign-up and reset mail is rare).
type SMTP struct {
	cfg      Config
	password string
	timeout  time.Duration
}

// NewSMTP checks cfg and reads the password from its variable.
func NewSMTP(cfg Config) (*SMTP, error) {
	switch {
	case cfg.Host == "":
		return nil, errors.New("mail: host is required")
	case cfg.From == "":
		return nil, errors.New("mail: from is required")
	case cfg.Security != StartTLS && cfg.Security != TLS && cfg.Security != None:
		return nil, fmt.Errorf("mail: security %q must be starttls, tls or none", cfg.Security)
	}
	if cfg.Port == 0 {
		cfg.Port = map[string]int{StartTLS: 587, TLS: 465, None: 25}[cfg.Security]
	}
	s := &SMTP{cfg: cfg, timeout: 30 * time.Second}
	if cfg.Username != "" {
		if cfg.PasswordEnv == "" {
			return nil, errors.New("mail: username is set, so password_env must name the variable with the password")
		}
		if s.password = os.Getenv(cfg.PasswordEnv); s.password == "" {
			return nil, fmt.Errorf("mail: the environment variable %s (password_env) is empty", cfg.PasswordEnv)
		}
	}
	return s, nil
}

// Send delivers m.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.timeout)}
	auth := gomail.SMTPAuthPlain
	switch s.cfg.Security {
	case TLS:
		opts = append(opts, gomail.WithSSL())
	case StartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case None:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
		auth = gomail.SMTPAuthPlainNoEnc
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(auth), gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.password))
	}
	c, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	msg := gomail.NewMsg()
	if err := msg.From(s.cfg.From); err != nil {
		return fmt.Errorf("mail: from: %w", err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("mail: to: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mail: send via %s:%d: %w", s.cfg.Host, s.cfg.Port, err)
	}
	return nil
}

// Dev is the mailer of dev mode (no SMTP server configured): it writes the link to the log,
// marked so nobody mistakes it for a mail that went out. Never used when SMTP is set.
type Dev struct{ Logger *slog.Logger }

// Send logs m's link.
func (d Dev) Send(_ context.Context, m Message) error {
	d.Logger.Warn("DEV MODE: no SMTP server configured, this mail was NOT sent; its link is here instead",
		"to", m.To, "subject", m.Subject, "link", m.Link)
	return nil
}
