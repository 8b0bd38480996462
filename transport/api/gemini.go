package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// The Gemini API as a client format: POST /v1beta/models/{model}:{method}
// for generateContent, streamGenerateContent and countTokens, and the model list. The model
// and the stream mode are in the path; everything else is the shared generate pipeline.

// geminiAction serves POST /v1beta/models/{model}:{method}.
func (s *Server) geminiAction(w http.ResponseWriter, r *http.Request) {
	action := muxVar(r, "action")
	cut := strings.LastIndexByte(action, ':')
	model, method := action, ""
	if cut >= 0 {
		model, method = action[:cut], action[cut+1:]
	}
	switch method {
	case "generateContent":
		s.generate(w, r, geminiSpec(model, false))
	case "streamGenerateContent":
		if r.URL.Query().Get("alt") == "sse" {
			s.generate(w, r, geminiSpec(model, true))
			return
		}
		// Without alt=sse the API streams one JSON array, written as it goes.
		aw := &arrayWriter{ResponseWriter: w}
		s.generate(aw, r, geminiSpec(model, true))
		aw.close()
	case "countTokens":
		s.geminiCountTokens(w, r, model)
	default:
		x := s.begin(w, r, "gemini")
		x.envelope = gemini.Format
		s.authenticate(r, x) // a known key gets its rate headers; the answer is this 404 either way
		s.render(x, &apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Code: "unknown_method",
			Message: "models/" + model + ":" + method + " is not a method of this API: use generateContent, streamGenerateContent or countTokens"})
	}
}

// geminiSpec is the gemini client format for one request, with its path's model and mode.
func geminiSpec(model string, stream bool) *clientSpec {
	return &clientSpec{name: codec.FormatGemini, format: gemini.Format, target: &pathTarget{model: model, stream: stream}}
}

// geminiCountTokens answers :countTokens from the gateway's own estimate, as count_tokens does
// for messages clients: every model, whatever its route's format, at no upstream cost. The
// body is {"contents": …} or {"generateContentRequest": {…}}.
func (s *Server) geminiCountTokens(w http.ResponseWriter, r *http.Request, model string) {
	x, body, ok := s.openCount(w, r, "gemini_count_tokens", gemini.Format)
	if !ok {
		return
	}
	var wrapped struct {
		Request json.RawMessage `json:"generateContentRequest"`
	}
	if json.Unmarshal(body, &wrapped) == nil && len(bytes.TrimSpace(wrapped.Request)) > 0 {
		body = wrapped.Request
	}
	req, err := gemini.Format.DecodeRequest(body)
	if err != nil {
		s.render(x, irInvalid(err))
		return
	}
	m, e := resolveModel(x, model, catalog.KindChat)
	if e != nil {
		s.render(x, e)
		return
	}
	s.answer(x, map[string]int{"totalTokens": countInput(req, m)})
}

// arrayWriter turns the SSE frames the pipeline writes into the JSON array
// streamGenerateContent sends without alt=sse: "[" chunk "," chunk … "]". The pipeline writes
// one whole frame per Write; anything that is not an event stream passes through.
type arrayWriter struct {
	http.ResponseWriter
	array   bool // the answer is a stream being reframed
	started bool // "[" is written
	pending []byte
}

func (a *arrayWriter) WriteHeader(status int) {
	h := a.Header()
	if status == http.StatusOK && strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		a.array = true
		h.Set("Content-Type", "application/json")
	}
	a.ResponseWriter.WriteHeader(status)
}

func (a *arrayWriter) Write(p []byte) (int, error) {
	if !a.array {
		return a.ResponseWriter.Write(p)
	}
	a.pending = append(a.pending, p...)
	for {
		i := bytes.Index(a.pending, []byte("\n\n"))
		if i < 0 {
			return len(p), nil
		}
		frame := a.pending[:i]
		a.pending = a.pending[i+2:]
		data, ok := bytes.CutPrefix(frame, []byte("data: "))
		if !ok {
			continue // the gemini format writes only data lines
		}
		sep := []byte(",\r\n")
		if !a.started {
			a.started, sep = true, []byte("[")
		}
		if _, err := a.ResponseWriter.Write(append(sep, data...)); err != nil {
			return 0, err
		}
	}
}

// Unwrap is the writer underneath (http.ResponseController, the recover middleware).
func (a *arrayWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// Flush forwards to the connection, so each chunk reaches the client as it is written.
func (a *arrayWriter) Flush() {
	if f, ok := a.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// close ends the array once the pipeline is done.
func (a *arrayWriter) close() {
	if !a.array {
		return
	}
	if !a.started {
		a.ResponseWriter.Write([]byte("["))
	}
	a.ResponseWriter.Write([]byte("]"))
	a.Flush()
}

// googleKey is the key a Gemini API client sends: the x-goog-api-key header (what the Google
// SDKs send) or the key query parameter. Gemini CLI's bearer mode uses Authorization.
func googleKey(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("x-goog-api-key")); k != "" {
		return k
	}
	return strings.TrimSpace(r.URL.Query().Get("key"))
}

// isGoogleAPI reports whether the request is under the Gemini API's path.
func isGoogleAPI(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/v1beta/") }

// googleErrorBody renders a gateway error in Google's envelope. What other formats splice into
// the error object goes into its details, typed as Google's own: the request id as a
// RequestInfo, Retry-After as a RetryInfo, the gateway's code and limit fields as an
// ErrorInfo — shapes the Google SDKs read (go-genai keeps details as they are).
func googleErrorBody(e *apiError, requestID string) []byte {
	var details []any
	if e.Code != "" {
		info := map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
			"reason": strings.ToUpper(e.Code), "domain": "modelgate"}
		if len(e.Extra) > 0 {
			meta := map[string]string{} // ErrorInfo.metadata holds strings
			for k, v := range e.Extra {
				meta[k] = strings.Trim(string(mustJSON(v)), `"`)
			}
			info["metadata"] = meta
		}
		details = append(details, info)
	}
	if e.RetryAfter > 0 {
		details = append(details, map[string]string{"@type": "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": strconv.Itoa(e.RetryAfter) + "s"})
	}
	if requestID != "" {
		details = append(details, map[string]string{"@type": "type.googleapis.com/google.rpc.RequestInfo",
			"requestId": requestID})
	}
	return gemini.EncodeErrorDetails(&ir.Error{Status: e.Status, Kind: kindOf(e.Status), Code: e.Code,
		Param: e.Param, Message: e.Message}, details...)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
