package node

import (
	"log/slog"

	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/auth"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/mail"
)

// startAuth builds the /auth endpoints over store with the config file's auth section: SMTP
// when auth.mail is set, else dev mode (links in the log). Links point at auth.base_url,
// else server.public_url, else nodeURL — never at a request's Host, which a caller sets.
// The session cookie is Secure whenever the current catalog's public_url is https.
func startAuth(cats *catalog.Holder, nodeURL string, store auth.Store, limit *authlimit.Limiter, logger *slog.Logger) (*auth.Server, error) {
	cat := cats.Load()
	var mailer mail.Mailer = mail.Dev{Logger: logger}
	if m := cat.Auth.Mail; m != nil {
		smtp, err := mail.NewSMTP(mail.Config{Host: m.Host, Port: m.Port, Security: m.Security, Username: m.Username, PasswordEnv: m.PasswordEnv, From: m.From})
		if err != nil {
			return nil, err
		}
		mailer = smtp
	} else {
		logger.Warn("DEV MODE mail: no auth.mail in the config file, so verification and reset links are written to this log instead of being mailed")
	}
	base := cat.Auth.BaseURL
	if base == "" {
		base = cat.Server.PublicURL
	}
	if base == "" {
		base = nodeURL
	}
	return auth.New(auth.Config{Store: store, Mailer: mailer, Plan: cat.Auth.SignupPlan, BaseURL: base, AuthLimit: limit, Logger: logger,
		PublicURL: func() string { return cats.Load().Server.PublicURL }}), nil
}
