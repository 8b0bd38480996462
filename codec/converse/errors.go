package converse

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelgate/modelgate/codec/ir"
)

// awsError is what Bedrock says of one error type: its HTTP status and its neutral class.
type awsError struct {
	status int
	kind   ir.ErrorKind
}

// errorTypes are Bedrock runtime's error types (the X-Amzn-Errortype header's name, and with
// a lower-case first letter a stream's exception event), by name. A bad, missing or expired
// credential is the route's authentication failing, whatever the 403 says.
var errorTypes = map[string]awsError{
	"ValidationException":                 {http.StatusBadRequest, ir.ErrInvalidRequest},
	"AccessDeniedException":               {http.StatusForbidden, ir.ErrPermission},
	"ResourceNotFoundException":           {http.StatusNotFound, ir.ErrNotFound},
	"ModelTimeoutException":               {http.StatusRequestTimeout, ir.ErrTimeout},
	"ModelErrorException":                 {http.StatusFailedDependency, ir.ErrServer},
	"ModelStreamErrorException":           {http.StatusFailedDependency, ir.ErrServer},
	"ThrottlingException":                 {http.StatusTooManyRequests, ir.ErrRateLimit},
	"ModelNotReadyException":              {http.StatusTooManyRequests, ir.ErrOverloaded},
	"ServiceQuotaExceededException":       {http.StatusBadRequest, ir.ErrRateLimit},
	"InternalServerException":             {http.StatusInternalServerError, ir.ErrServer},
	"ServiceUnavailableException":         {http.StatusServiceUnavailable, ir.ErrOverloaded},
	"InvalidSignatureException":           {http.StatusForbidden, ir.ErrAuthentication},
	"MissingAuthenticationTokenException": {http.StatusForbidden, ir.ErrAuthentication},
	"ExpiredTokenException":               {http.StatusForbidden, ir.ErrAuthentication},
	"UnrecognizedClientException":         {http.StatusForbidden, ir.ErrAuthentication},
	"IncompleteSignatureException":        {http.StatusBadRequest, ir.ErrAuthentication},
}

// typeName is an error type as the table spells it: the header's value up to its first ':'
// (the rest is a namespace URL), a "namespace#Type" body member's type, a stream exception's
// name with its first letter raised.
func typeName(s string) string {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// authMessages are what a 403 of a credential failure says, for an error whose type is not
// known (DecodeError sees the body only): those are authentication, not permission.
var authMessages = []string{"signature", "security token", "Authentication Token"}

// maxErrorText bounds the message taken from a body that is not Bedrock's JSON.
const maxErrorText = 512

// DecodeError reads a non-2xx Bedrock answer: {"message":"…"} (or "Message"), with a
// "__type" member where the body names its type. The status is kept; the kind comes from the
// type when known, else from the status (424, a model's own error, is a server error).
func (format) DecodeError(status int, body []byte) *ir.Error {
	return DecodeTypedError(status, "", body)
}

// DecodeTypedError is DecodeError for a caller that has the X-Amzn-Errortype header
// (errType, "ThrottlingException:http://internal.amazon.com/coral/…" or bare), which names the
// type better than any body.
func DecodeTypedError(status int, errType string, body []byte) *ir.Error {
	var b struct {
		Message  string `json:"message"`
		Message2 string `json:"Message"`
		Type     string `json:"__type"`
	}
	trimmed := bytes.TrimSpace(body)
	parsed := json.Unmarshal(trimmed, &b) == nil
	msg := b.Message
	if msg == "" {
		msg = b.Message2
	}
	if !parsed || msg == "" {
		msg = bodyText(trimmed) // not Bedrock's shape: the body says what happened
	}
	name := typeName(errType)
	if name == "" {
		name = typeName(b.Type)
	}
	e := &ir.Error{Status: status, Message: msg}
	if t, ok := errorTypes[name]; ok {
		e.Kind, e.Code = t.kind, name
	} else {
		e.Kind = kindForStatus(status, msg)
		e.Code = name
	}
	if e.Status == 0 {
		e.Status = http.StatusBadGateway
	}
	if e.Message == "" {
		e.Message = http.StatusText(e.Status)
	}
	if e.Message == "" {
		e.Message = "upstream answered " + strconv.Itoa(e.Status)
	}
	return e
}

func kindForStatus(status int, msg string) ir.ErrorKind {
	switch status {
	case http.StatusFailedDependency:
		return ir.ErrServer
	case http.StatusForbidden:
		for _, m := range authMessages {
			if strings.Contains(msg, m) {
				return ir.ErrAuthentication
			}
		}
	}
	return ir.KindForStatus(status)
}

// bodyText is a body that is not JSON as a message: valid UTF-8, at most maxErrorText bytes.
func bodyText(b []byte) string {
	msg := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(msg) > maxErrorText {
		cut := maxErrorText
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}

// streamError is the in-band error of a stream's exception event (name as the event names it,
// data {"message":…}, modelStreamErrorException adding originalMessage): the type's status and
// class, the provider's message.
func streamError(name string, data []byte) *ir.Error {
	var b struct {
		Message         string `json:"message"`
		Message2        string `json:"Message"`
		OriginalMessage string `json:"originalMessage"`
	}
	json.Unmarshal(data, &b)
	typ := typeName(name)
	t, ok := errorTypes[typ]
	if !ok {
		t = awsError{http.StatusInternalServerError, ir.ErrServer}
	}
	msg := b.Message
	for _, m := range []string{b.Message2, b.OriginalMessage, "the upstream stream failed (" + name + ")"} {
		if msg == "" {
			msg = m
		}
	}
	return &ir.Error{Status: t.status, Kind: t.kind, Code: typ, Message: msg}
}
