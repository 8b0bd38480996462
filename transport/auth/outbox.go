package auth

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/transport/mail"
)

// outbox sends mail in the background, so an answer takes as long whether or not a mail
// goes out (which would tell whether an e-mail is registered).
type outbox struct {
	mailer mail.Mailer
	log    *slog.Logger
	ch     chan mail.Message
	ended  <-chan struct{} // closed when the sender has ended (close)
	once   sync.Once
}

const (
	outboxSize  = 256
	sendTimeout = time.Minute
)

// whereOutbox names the sender to supervise (its panics, its fault point).
const whereOutbox = "auth.outbox"

func newOutbox(m mail.Mailer, log *slog.Logger) *outbox {
	o := &outbox{mailer: m, log: log, ch: make(chan mail.Message, outboxSize)}
	o.ended = supervise.Loop(whereOutbox, nil, o.run)
	return o
}

// run sends the queued mails until the queue closes. A panic loses the mail being sent
// (logged, counted); started again, the sender goes on with the next.
func (o *outbox) run() {
	for m := range o.ch {
		supervise.Fault(whereOutbox)
		o.deliver(m)
	}
}

func (o *outbox) deliver(m mail.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	if err := o.mailer.Send(ctx, m); err != nil {
		// The address is the account's; the link (a secret) is never logged here.
		o.log.Error("auth: a mail was not sent", "to", m.To, "subject", m.Subject, "err", err)
	}
}

// send queues m; a full queue drops it (logged): the caller's answer does not wait.
func (o *outbox) send(m mail.Message) {
	select {
	case o.ch <- m:
	default:
		o.log.Error("auth: the mail queue is full; a mail was dropped", "to", m.To, "subject", m.Subject)
	}
}

func (o *outbox) close() {
	o.once.Do(func() { close(o.ch) })
	<-o.ended
}

// The mails. Plain text: the link is the whole point, and nothing renders it wrong.

func verifyMail(to, link string) mail.Message {
	return mail.Message{To: to, Link: link, Subject: "Verify your e-mail address for modelgate",
		Text: "Someone (hopefully you) signed up for modelgate with this address.\n\n" +
			"Open this link within 24 hours to verify it:\n\n" + link + "\n\n" +
			"If it was not you, ignore this mail: nothing happens without the link.\n"}
}

func alreadyRegisteredMail(to, link string) mail.Message {
	return mail.Message{To: to, Link: link, Subject: "Someone tried to sign up to modelgate with your address",
		Text: "Someone tried to sign up for modelgate with this address, which already has an account.\n\n" +
			"If it was you, log in instead (or reset your password if you forgot it):\n\n" + link + "\n\n" +
			"If it was not you, ignore this mail: your account is unchanged.\n"}
}

func resetMail(to, link string) mail.Message {
	return mail.Message{To: to, Link: link, Subject: "Reset your modelgate password",
		Text: "Someone (hopefully you) asked to reset the password of your modelgate account.\n\n" +
			"Open this link within 1 hour to choose a new one:\n\n" + link + "\n\n" +
			"If it was not you, ignore this mail: your password is unchanged.\n"}
}

// passwordChangedMail tells the account's owner its password changed (ASVS V2.2.3, V2.5.5):
// if it was not them, the link starts a reset, which also ends every session.
func passwordChangedMail(to, link string) mail.Message {
	return mail.Message{To: to, Link: link, Subject: "Your modelgate password was changed",
		Text: "The password of your modelgate account was just changed, and its other sessions were ended.\n\n" +
			"If it was you, there is nothing to do.\n\n" +
			"If it was not you, reset your password now; that also ends every session:\n\n" + link + "\n"}
}
