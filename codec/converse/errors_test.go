package converse

import (
	"reflect"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func TestDecodeError(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		errType string // the X-Amzn-Errortype header ("" for DecodeError)
		body    string
		want    ir.Error
	}{
		{"throttled", 429, "", `{"message":"Too many requests, please wait before trying again."}`,
			ir.Error{Status: 429, Kind: ir.ErrRateLimit, Message: "Too many requests, please wait before trying again."}},
		{"the header names the type", 429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
			`{"message":"Too many requests, please wait before trying again."}`,
			ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "ThrottlingException", Message: "Too many requests, please wait before trying again."}},
		{"a model not ready is overloaded, not the caller's rate", 429, "ModelNotReadyException", `{"message":"Model is not ready."}`,
			ir.Error{Status: 429, Kind: ir.ErrOverloaded, Code: "ModelNotReadyException", Message: "Model is not ready."}},
		{"validation", 400, "", `{"message":"The model returned the following errors: messages: text content blocks must be non-empty"}`,
			ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Message: "The model returned the following errors: messages: text content blocks must be non-empty"}},
		{"a bad signature is authentication, not permission", 403, "",
			`{"message":"The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."}`,
			ir.Error{Status: 403, Kind: ir.ErrAuthentication, Message: "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."}},
		{"an expired token", 403, "ExpiredTokenException", `{"message":"The security token included in the request is expired"}`,
			ir.Error{Status: 403, Kind: ir.ErrAuthentication, Code: "ExpiredTokenException", Message: "The security token included in the request is expired"}},
		{"access denied is permission", 403, "", `{"Message":"User: arn:aws:iam::1:user/x is not authorized to perform: bedrock:InvokeModel"}`,
			ir.Error{Status: 403, Kind: ir.ErrPermission, Message: "User: arn:aws:iam::1:user/x is not authorized to perform: bedrock:InvokeModel"}},
		{"a __type in the body", 404, "", `{"__type":"com.amazon.bedrock#ResourceNotFoundException","message":"Model not found."}`,
			ir.Error{Status: 404, Kind: ir.ErrNotFound, Code: "ResourceNotFoundException", Message: "Model not found."}},
		{"a model's own error (424) is a server error", 424, "", `{"message":"Model error."}`,
			ir.Error{Status: 424, Kind: ir.ErrServer, Message: "Model error."}},
		{"a model timeout", 408, "", `{"message":"Model has timed out in processing the request."}`,
			ir.Error{Status: 408, Kind: ir.ErrTimeout, Message: "Model has timed out in processing the request."}},
		{"unavailable", 503, "ServiceUnavailableException", `{"message":"Service unavailable."}`,
			ir.Error{Status: 503, Kind: ir.ErrOverloaded, Code: "ServiceUnavailableException", Message: "Service unavailable."}},
		{"a body that is not Bedrock's: its text", 502, "", "<html>Bad Gateway</html>",
			ir.Error{Status: 502, Kind: ir.ErrServer, Message: "<html>Bad Gateway</html>"}},
		{"an empty body: the status text", 500, "", "",
			ir.Error{Status: 500, Kind: ir.ErrServer, Message: "Internal Server Error"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got *ir.Error
			if c.errType == "" {
				got = Format.DecodeError(c.status, []byte(c.body))
			} else {
				got = DecodeTypedError(c.status, c.errType, []byte(c.body))
			}
			if !reflect.DeepEqual(*got, c.want) {
				t.Errorf("got  %+v\nwant %+v", *got, c.want)
			}
		})
	}
}

func TestDecodeErrorBoundsText(t *testing.T) {
	got := Format.DecodeError(500, []byte(strings.Repeat("é", 400)))
	if want := strings.Repeat("é", 256) + "…"; got.Message != want {
		t.Errorf("message of %d bytes, want %d", len(got.Message), len(want))
	}
}
