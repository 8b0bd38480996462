package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// What an answer's headers say about how it was served (the model, the translation's losses,
// the reasoning effort, the output cap, a deprecation), and the losses an answer's
// signatures make.

// announce sets the headers that describe the translation, before the status is written.
func (t *turn) announce(w http.ResponseWriter) {
	w.Header().Set("X-Modelgate-Model", t.model.ID) // the model that serves
	if d := t.loss.Fields(); len(d) > 0 {
		w.Header().Set("X-Modelgate-Dropped", strings.Join(d, ", "))
	}
	if t.decision.EffortUsed != "" {
		w.Header().Set("X-Reasoning-Effort", t.decision.EffortUsed)
	}
	if t.clamped > 0 {
		w.Header().Set("X-Max-Tokens", strconv.Itoa(t.clamped))
	}
}

// carriesSignature says which formats' reasoning and text signatures a client format can hand
// back to us (docs/conversion.md, "Signatures and other opaque reasoning state"). Gemini's
// signatures on function calls ride in tool-call ids in every format and are never lost.
var carriesSignature = map[string]map[string]bool{
	codec.FormatChat:      {"messages": true},
	codec.FormatMessages:  {"messages": true},
	codec.FormatResponses: {"responses": true},
	codec.FormatGemini:    {"gemini": true},
}

// answerLoss records a signature the client's format cannot carry back (field names what it
// was on), so the next turn cannot hand it to the upstream that issued it.
func (t *turn) answerLoss(field, sigFormat string) {
	if sigFormat == "" || carriesSignature[t.spec.name][sigFormat] {
		return
	}
	t.loss.Drop(field)
}

const (
	lostReasoningSignature = "answer.reasoning.signature"
	lostTextSignature      = "answer.text.signature"
)

func (t *turn) answerLossParts(parts []ir.Part) {
	for _, p := range parts {
		switch {
		case p.Kind == ir.PartReasoning && (p.Reasoning.Signature != "" || p.Reasoning.Redacted != "" || p.Reasoning.Encrypted != ""):
			t.answerLoss(lostReasoningSignature, p.Reasoning.SignatureFormat)
		case p.Signature != "":
			t.answerLoss(lostTextSignature, p.SignatureFormat)
		}
	}
}

// eventLoss is answerLossParts for a stream's events; their headers are out, so the loss
// only reaches the dropped-fields counter.
func (t *turn) eventLoss(e ir.Event) {
	switch {
	case e.Kind == ir.EvSignature || e.Kind == ir.EvRedacted:
		t.answerLoss(lostReasoningSignature, e.Format)
	case e.Kind == ir.EvText && e.Signature != "":
		t.answerLoss(lostTextSignature, e.Format)
	}
}

// setDeprecation announces a model's retirement (RFC 9745 Deprecation, RFC 8594 Sunset).
func setDeprecation(w http.ResponseWriter, m *catalog.Model) {
	if m.DeprecatedAt == 0 {
		return
	}
	w.Header().Set("Deprecation", "@"+itoa(m.DeprecatedAt))
	w.Header().Set("Sunset", time.Unix(m.DeprecatedAt, 0).UTC().Format(http.TimeFormat))
	if m.Replacement != "" {
		w.Header().Set("Link", `</v1/models/`+m.Replacement+`>; rel="successor-version"`)
	}
}
