package meta

import (
	"fmt"
	"slices"

	"github.com/modelgate/modelgate/persistence"
)

// The sign-in writes, one kind each. Each applies a persistence apply half and
// answers with the account it touched.
const (
	KindSignup         Kind = "signup"          // Signup
	KindIssueToken     Kind = "issue_token"     // Token
	KindUseToken       Kind = "use_token"       // TokenUse
	KindCreateSession  Kind = "create_session"  // Session
	KindEndSessions    Kind = "end_sessions"    // SessionEnd
	KindTouchSession   Kind = "touch_session"   // Touch
	KindChangePassword Kind = "change_password" // Password
	KindAccountState   Kind = "account_state"   // State
)

var authKinds = []Kind{KindSignup, KindIssueToken, KindUseToken, KindCreateSession, KindEndSessions,
	KindTouchSession, KindChangePassword, KindAccountState}

func isAuthKind(k Kind) bool { return slices.Contains(authKinds, k) }

// applyAuth runs the apply half of a sign-in command.
func applyAuth(b *persistence.MetaBatch, cmd Command) (persistence.Account, error) {
	switch {
	case cmd.Kind == KindSignup && cmd.Signup != nil:
		return b.Signup(*cmd.Signup)
	case cmd.Kind == KindIssueToken && cmd.Token != nil:
		return b.IssueToken(*cmd.Token)
	case cmd.Kind == KindUseToken && cmd.TokenUse != nil:
		return b.UseToken(*cmd.TokenUse)
	case cmd.Kind == KindCreateSession && cmd.Session != nil:
		return b.CreateSession(*cmd.Session)
	case cmd.Kind == KindEndSessions && cmd.SessionEnd != nil:
		return b.EndSessions(*cmd.SessionEnd)
	case cmd.Kind == KindTouchSession && cmd.Touch != nil:
		return b.TouchSession(*cmd.Touch)
	case cmd.Kind == KindChangePassword && cmd.Password != nil:
		return b.ChangePassword(*cmd.Password)
	case cmd.Kind == KindAccountState && cmd.State != nil:
		return b.SetAccountDisabled(*cmd.State)
	}
	return persistence.Account{}, &persistence.Error{Kind: persistence.ErrInvalid, Field: "command",
		Msg: fmt.Sprintf("command of kind %q without its payload", cmd.Kind)}
}
