package catalog

import (
	"fmt"
	"net/mail"
)

// Auth is the config file's auth section: how people sign themselves up. Read at
// start only; a reload keeps the running settings.
type Auth struct {
	// SignupPlan is the plan of an account made by sign-up; it must be one of the plans.
	// Unset, it is "free" when there is such a plan, else "": sign-up is off.
	SignupPlan string
	// BaseURL is where links in mail point (scheme, host, any path prefix); "" = the
	// server's public_url, else the node's own address.
	BaseURL string
	// Mail is the SMTP server mail goes out through; nil (no auth.mail) is dev mode, which
	// writes the links to the log instead.
	Mail *Mail
}

// Mail is auth.mail: an SMTP server.
type Mail struct {
	Host        string
	Port        int    // 0: the security's usual port (587, 465, 25)
	Security    string // starttls, tls or none
	Username    string // "" = no SMTP authentication
	PasswordEnv string // the environment variable with the SMTP password
	From        string
}

type authDoc struct {
	SignupPlan string   `yaml:"signup_plan"`
	BaseURL    string   `yaml:"base_url"`
	Mail       *mailDoc `yaml:"mail"`
}

type mailDoc struct {
	Host        string `yaml:"host"`
	Port        int    `yaml:"port"`
	Security    string `yaml:"security"`
	Username    string `yaml:"username"`
	PasswordEnv string `yaml:"password_env"`
	From        string `yaml:"from"`
}

// DefaultSignupPlan is the plan of a signed-up account when auth.signup_plan is not set.
const DefaultSignupPlan = "free"

func (v *validator) auth(c *Catalog, d authDoc) Auth {
	out := Auth{SignupPlan: d.SignupPlan}
	if _, ok := c.Plan(out.SignupPlan); !ok && out.SignupPlan != "" {
		v.fail("", "auth.signup_plan", fmt.Sprintf("%q is not one of the plans", out.SignupPlan))
	} else if _, ok := c.Plan(DefaultSignupPlan); out.SignupPlan == "" && ok {
		out.SignupPlan = DefaultSignupPlan
	}
	if d.BaseURL != "" {
		errs := len(v.errs)
		out.BaseURL = v.publicURL(d.BaseURL)
		if len(v.errs) > errs {
			v.errs[len(v.errs)-1] = fmt.Sprintf("%s: auth.base_url: %q must be an absolute http(s) URL, such as https://llm.example.com", v.path, d.BaseURL)
		}
	}
	if m := d.Mail; m != nil {
		if m.Security == "" {
			m.Security = "starttls"
		}
		switch {
		case m.Host == "":
			v.fail("", "auth.mail.host", "the SMTP server's host is required")
		case m.Port < 0 || m.Port > 65535:
			v.fail("", "auth.mail.port", fmt.Sprintf("%d is not a port", m.Port))
		case m.Security != "starttls" && m.Security != "tls" && m.Security != "none":
			v.fail("", "auth.mail.security", fmt.Sprintf("%q must be starttls, tls or none", m.Security))
		case m.Username != "" && m.PasswordEnv == "":
			v.fail("", "auth.mail.password_env", "a username needs password_env: the environment variable with the password")
		}
		if _, err := mail.ParseAddress(m.From); err != nil {
			v.fail("", "auth.mail.from", fmt.Sprintf("%q must be an address such as \"modelgate <noreply@example.com>\"", m.From))
		}
		out.Mail = &Mail{Host: m.Host, Port: m.Port, Security: m.Security, Username: m.Username, PasswordEnv: m.PasswordEnv, From: m.From}
	}
	return out
}
