package browsertest

import (
	"net/smtp"
	"strings"
	"testing"
	"time"
)

// A verification mail as a mail library writes it: multipart, the text part
// quoted-printable, so the link is broken by a soft line break and its = is escaped.
const verificationMail = "From: modelgate <no-reply@modelgate.test>\r\n" +
	"To: ada@example.com\r\n" +
	"Subject: =?utf-8?q?Verify_your_e-mail_=E2=80=94_modelgate?=\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/alternative; boundary=b1\r\n" +
	"\r\n" +
	"--b1\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"Open this link to verify your address:\r\n" +
	"http://127.0.0.1:8080/auth/verify?token=3DvT0k3n_abcdefghijklmnopqrstuvwxyz012=\r\n" +
	"3456789.\r\n" +
	"--b1\r\n" +
	"Content-Type: text/html; charset=utf-8\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"PGEgaHJlZj0iaHR0cDovL2V4YW1wbGUuY29tLyI+eDwvYT4=\r\n" +
	"--b1--\r\n"

func TestMailServerKeepsTheMessageAndFindsItsLink(t *testing.T) {
	cases := []struct {
		name, user, pass string // the server's credentials ("" user: no AUTH)
		clientAuth       smtp.Auth
		wantErr          string // the client's error; "" when the mail is accepted
	}{
		{name: "no auth", clientAuth: nil},
		{name: "plain auth", user: "mailer", pass: "s3cret", clientAuth: smtp.PlainAuth("", "mailer", "s3cret", "127.0.0.1")},
		{name: "wrong password", user: "mailer", pass: "s3cret", clientAuth: smtp.PlainAuth("", "mailer", "nope", "127.0.0.1"), wantErr: "535"},
		{name: "auth required", user: "mailer", pass: "s3cret", clientAuth: nil, wantErr: "530"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := StartMailServerWithAuth(t, c.user, c.pass)
			err := smtp.SendMail(m.Addr, c.clientAuth, "no-reply@modelgate.test", []string{"ada@example.com"}, []byte(verificationMail))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("send: %v, want %s", err, c.wantErr)
				}
				if n := len(m.Messages()); n != 0 {
					t.Fatalf("%d messages kept from a refused client", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			msg, err := m.WaitFor("ADA@example.com", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if msg.From != "no-reply@modelgate.test" || len(msg.To) != 1 || msg.To[0] != "ada@example.com" {
				t.Errorf("envelope from %q to %q", msg.From, msg.To)
			}
			if got := msg.Header("Subject"); got != "Verify your e-mail — modelgate" {
				t.Errorf("subject %q", got)
			}
			link, err := msg.Link("/auth/verify")
			if err != nil {
				t.Fatal(err)
			}
			if want := "http://127.0.0.1:8080/auth/verify?token=vT0k3n_abcdefghijklmnopqrstuvwxyz0123456789"; link != want {
				t.Errorf("link %q, want %q", link, want)
			}
			if _, err := msg.Link("/dashboard/reset"); err == nil {
				t.Errorf("found a reset link in a verification mail")
			}
		})
	}
}

func TestMailServerWaitNamesWhatItGot(t *testing.T) {
	m := StartMailServer(t)
	if err := smtp.SendMail(m.Addr, nil, "a@x.test", []string{"bob@example.com"}, []byte("Subject: hi\r\n\r\nhello\r\n")); err != nil {
		t.Fatal(err)
	}
	_, err := m.WaitFor("ada@example.com", 200*time.Millisecond)
	if err == nil || err.Error() != "no mail to ada@example.com within 200ms (1 messages to others)" {
		t.Fatalf("err = %v", err)
	}
	msg, _ := m.WaitFor("bob@example.com", time.Second)
	if text, _ := msg.Text(); text != "hello\r\n" {
		t.Errorf("text %q", text)
	}
}
