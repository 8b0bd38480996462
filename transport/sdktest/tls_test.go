package sdktest

import (
	"crypto/x509"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"google.golang.org/genai"

	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// wireLog is a RoundTripper that notes each answer's protocol and the certificate its
// connection was served.
type wireLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []wireSeen
}

type wireSeen struct {
	path, proto string
	cert        *x509.Certificate
}

func (l *wireLog) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err == nil {
		s := wireSeen{path: r.URL.Path, proto: resp.Proto}
		if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
			s.cert = resp.TLS.PeerCertificates[0]
		}
		l.mu.Lock()
		l.seen = append(l.seen, s)
		l.mu.Unlock()
	}
	return resp, err
}

func (l *wireLog) all() []wireSeen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]wireSeen(nil), l.seen...)
}

// curlHTTP2 calls the gateway with curl --http2, trusting caFile only, and returns the body
// and the protocol and status curl saw ("2 200").
func curlHTTP2(t *testing.T, caFile, url, key, body string) (string, string) {
	t.Helper()
	out, err := exec.Command("curl", "-sS", "--http2", "--cacert", caFile, "-H", "Authorization: Bearer "+key,
		"-H", "Content-Type: application/json", "-d", body, "-w", "\n%{http_version} %{http_code}", url).CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	s := strings.TrimSpace(string(out))
	i := strings.LastIndexByte(s, '\n')
	return s[:i], s[i+1:]
}

// The gateway over HTTPS with a self-signed certificate made here: the OpenAI, Anthropic and
// Google SDKs and curl --http2 are answered over HTTP/2; then the certificate files are
// replaced while a stream is open, the next connection is served the new certificate, and
// the open stream, begun on the old one, finishes whole.
func TestSDKsAndCurlOverHTTP2AndACertificateRotatedMidStream(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is not on PATH (Debian: apt-get install curl)")
	}
	env := nodetest.Start(t, "", nodetest.Options{TLS: true, TLSPollEvery: 50 * time.Millisecond})
	if !strings.HasPrefix(env.Node.URL, "https://127.0.0.1:") {
		t.Fatalf("node URL %s", env.Node.URL)
	}
	wire := &wireLog{next: env.Client.Transport}
	env.Client = &http.Client{Timeout: env.Client.Timeout, Transport: wire}
	const question = "Hello over TLS."

	t.Run("openai-go", func(t *testing.T) {
		client := openaiClient(env, env.Key)
		out, err := client.Chat.Completions.New(ctx(t), openai.ChatCompletionNewParams{Model: "chat",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(question)}})
		if err != nil {
			t.Fatal(err)
		}
		checkReply(t, model{ID: "chat", Upstreams: []string{"up-a", "up-b"}}, out.Choices[0].Message.Content, 16)
	})
	t.Run("anthropic-sdk-go", func(t *testing.T) {
		client := anthropicClient(env, env.Key)
		msg, err := client.Messages.New(ctx(t), anthropic.MessageNewParams{Model: "msg", MaxTokens: 64,
			Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(question))}})
		if err != nil {
			t.Fatal(err)
		}
		checkReply(t, model{ID: "msg", Upstreams: []string{"up-m"}}, msg.Content[0].Text, 16)
	})
	t.Run("go-genai", func(t *testing.T) {
		out, err := googleClient(t, env, env.Key).Models.GenerateContent(ctx(t), "gem", genai.Text(question), nil)
		if err != nil {
			t.Fatal(err)
		}
		checkReply(t, model{ID: "gem", Upstreams: []string{"up-g"}}, out.Text(), 16)
	})
	paths := map[string]bool{}
	for _, s := range wire.all() {
		paths[s.path] = true
		if s.proto != "HTTP/2.0" || !s.cert.Equal(env.Cert) {
			t.Errorf("%s answered over %s, certificate %v", s.path, s.proto, s.cert.Subject)
		}
	}
	for _, p := range []string{"/v1/chat/completions", "/v1/messages", "/v1beta/models/gem:generateContent"} {
		if !paths[p] {
			t.Errorf("no SDK call to %s went through (%v)", p, paths)
		}
	}
	chatBody := `{"model":"chat","messages":[{"role":"user","content":"` + question + `"}]}`
	if body, status := curlHTTP2(t, env.CertFile, env.Node.URL+"/v1/chat/completions", env.Key, chatBody); status != "2 200" || !strings.Contains(body, `"content":"Simulated reply from up-`) {
		t.Fatalf("curl: %s\n%s", status, body)
	}

	// A stream of five seconds, begun on the first certificate.
	for _, r := range []string{"a", "b"} {
		env.Sim.SetBehavior(r, simulator.Behavior{TokensPerSecond: 20})
	}
	client := openaiClient(env, env.Key)
	stream := client.Chat.Completions.NewStreaming(ctx(t), openai.ChatCompletionNewParams{Model: "chat",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Reply with 100 words.")}})
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	if !stream.Next() || !acc.AddChunk(stream.Current()) {
		t.Fatalf("the stream did not begin: %v", stream.Err())
	}

	// The rotation: a new pair written over the files the node serves.
	next := nodetest.WriteSelfSigned(t, env.CertFile, env.KeyFile, "rotated")
	fresh := nodetest.TLSClient(next)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := fresh.Get(env.Node.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.ProtoMajor != 2 || !resp.TLS.PeerCertificates[0].Equal(next) {
				t.Fatalf("after the rotation: %s, certificate %s", resp.Proto, resp.TLS.PeerCertificates[0].Subject)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("new connections were never served the new certificate: %v", err)
		}
		fresh.CloseIdleConnections()
	}
	if body, status := curlHTTP2(t, env.CertFile, env.Node.URL+"/v1/chat/completions", env.Key, chatBody); status != "2 200" || !strings.Contains(body, `"content":"Simulated reply from up-`) {
		t.Fatalf("curl trusting the new certificate: %s\n%s", status, body)
	}

	// The open stream goes on to its end on its connection.
	chunksAfter := 0
	for stream.Next() {
		chunksAfter++
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("the accumulator refused chunk %s", stream.Current().RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("the stream begun before the rotation: %v", err)
	}
	if chunksAfter == 0 {
		t.Fatal("the stream had ended before the rotation was seen: it proves nothing")
	}
	checkReply(t, model{ID: "chat", Upstreams: []string{"up-a", "up-b"}}, acc.Choices[0].Message.Content, 100)
	for _, s := range wire.all() {
		if s.path == "/v1/chat/completions" && !s.cert.Equal(env.Cert) {
			t.Errorf("a call on the old client's connection was served %s", s.cert.Subject)
		}
	}
}
