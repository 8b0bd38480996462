package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/reasoning"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/edge"
)

// The request as the client sent it: its body read within bounds, and for the generation
// endpoints decoded in the client's format (a turn).

// readBody reads the whole body within the catalog's limit, through the node's one bounded
// reader (transport/edge: deadline, minimum rate, bytes in flight).
func readBody(w http.ResponseWriter, r *http.Request, x *exchange) ([]byte, *apiError) {
	body, p := edge.ReadBody(w, r, x.catalog.Server.MaxBodyBytes)
	if p == nil {
		return body, nil
	}
	if p.Status == http.StatusRequestTimeout && x.ratesCtx != nil {
		// An HTTP/1 read that met its deadline cancels the request's context, but the client
		// still reads: its answer keeps the key's rate headers (publishRates waits on ratesCtx).
		x.ratesCtx = context.WithoutCancel(x.ratesCtx)
	}
	return nil, problemError(p)
}

// namedModel is the top-level "model" string of a JSON object, if it has one: the model a
// request names, read even when the gateway refuses the rest of it.
func namedModel(body []byte) string {
	v, ok := jsonscan.Member(body, "model")
	if !ok {
		return ""
	}
	var name string
	if json.Unmarshal(body[v.Start:v.End], &name) != nil {
		return ""
	}
	return name
}

// turn is one chat, messages, responses or gemini request on its way to a model: what the
// client sent, and the model it is being fitted to (choose.go).
type turn struct {
	spec        *clientSpec
	body        []byte
	clientModel string
	stream      bool
	chatReq     *chat.Request  // chat clients: the cheap pass-through view
	req         *ir.Request    // the canonical request (decoded lazily for chat clients)
	model       *catalog.Model // the model being tried
	named       *catalog.Model // the model the request names (an auto model, the first of a list)
	listed      []string       // the request's "models" fallback list, as sent
	choice      *choice        // the models that may serve it, in order (choose.go)
	decision    reasoning.Decision
	loss        ir.Loss
	header      http.Header // client headers a same-format route receives
	buildErr    *apiError   // why the last route could not take the request
	inputTokens int         // the input estimate
	windowCap   int         // an output cap the context window imposes (0 = none)
	clamped     int         // the client's max tokens cut to the model's max_output_tokens
}

// decodeTurn reads a generation request: its "models" list (the fallbacks a client may name),
// then the body in the client's format.
func decodeTurn(x *exchange, r *http.Request, spec *clientSpec, body []byte) (*turn, *apiError) {
	t := &turn{spec: spec, body: body, header: clientHeaders(r)}
	x.turn = t
	if spec.target != nil {
		x.named = spec.target.model // the Gemini API names it in the path
	} else {
		var e *apiError
		if t.listed, t.body, e = modelsField(body, x.catalog.Server.MaxRequestModels); e != nil {
			return t, e
		}
		if x.named == "" && len(t.listed) > 0 {
			x.named = t.listed[0]
		}
	}
	return t, t.decode()
}

// decode reads the body in the client's format. Chat clients get the light parse first: a
// chat route takes their body as it is, and the IR is only built when a route needs it.
func (t *turn) decode() *apiError {
	if t.spec.name == codec.FormatChat {
		req, err := chat.ParseRequest(t.body)
		if err != nil {
			return irInvalid(err)
		}
		t.chatReq, t.clientModel, t.stream = req, req.Model, req.Stream
		return nil
	}
	req, err := t.spec.format.DecodeRequest(t.body)
	if err != nil {
		return irInvalid(err)
	}
	if p := t.spec.target; p != nil {
		req.Model, req.Stream = p.model, p.stream
	}
	t.req, t.clientModel, t.stream = req, req.Model, req.Stream
	return nil
}

// canonical returns the IR, decoding a chat body the first time it is needed.
func (t *turn) canonical() (*ir.Request, *apiError) {
	if t.req == nil {
		req, err := chat.DecodeIR(t.body)
		if err != nil {
			return nil, irInvalid(err)
		}
		t.req = req
	}
	return t.req, nil
}

func irInvalid(err error) *apiError {
	if e, ok := err.(*ir.Error); ok {
		return errInvalid(e.Param, e.Message)
	}
	return errInvalid("", err.Error())
}

// forwardedHeaders are the client headers a same-format messages route must see.
var forwardedHeaders = []string{"anthropic-version", "anthropic-beta"}

func clientHeaders(r *http.Request) http.Header {
	h := http.Header{}
	for _, name := range forwardedHeaders {
		if v := r.Header.Values(name); len(v) > 0 {
			h[http.CanonicalHeaderKey(name)] = v
		}
	}
	return h
}

// modelsKey is the request member that lists fallback models (OpenRouter's "models").
const modelsKey = "models"

// modelsField reads the request's "models" list and takes it out of the body (no provider
// knows the member). Without "model", the list's first entry becomes it. A body without the
// word costs no scan.
func modelsField(body []byte, limit int) (list []string, out []byte, e *apiError) {
	if !bytes.Contains(body, []byte(`"models"`)) {
		return nil, body, nil
	}
	o, err := jsonpatch.Scan(body)
	if err != nil {
		return nil, body, nil // not an object: the format's decoder says so in its own words
	}
	raw := o.Value(modelsKey)
	if raw == nil || string(raw) == "null" {
		return nil, body, nil
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, nil, errInvalid(modelsKey, "models must be an array of model ids (strings), tried in order")
	}
	switch {
	case len(list) == 0:
		return nil, nil, errInvalid(modelsKey, "models must list at least one model id")
	case len(list) > limit:
		return nil, nil, errInvalid(modelsKey, fmt.Sprintf("models lists %d models; this gateway tries at most %d", len(list), limit))
	}
	for i, name := range list {
		if name == "" {
			return nil, nil, errInvalid(modelsParam(i), modelsParam(i)+" is empty: each entry must be a model id")
		}
	}
	ops := []jsonpatch.Op{jsonpatch.Remove(modelsKey)}
	if v := o.Value("model"); v == nil || string(v) == "null" {
		q, _ := json.Marshal(list[0])
		ops = append(ops, jsonpatch.Set("model", q))
	}
	return list, o.Apply(ops...), nil
}

func modelsParam(i int) string { return modelsKey + "[" + strconv.Itoa(i) + "]" }
