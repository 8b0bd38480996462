package api

import (
	"fmt"
	"net/http"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/tokens"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// defaultMaxTokens is what an answer may take when neither the client nor the model says.
const defaultMaxTokens = 4096

// estimateInput is the request's input tokens: counted with the model's tokenizer when the
// catalog names one, else estimated from the IR, or from the body's size for a chat body
// passed through without a full decode.
func (g *generation) estimateInput() int {
	if g.model.Tokenizer != "" {
		if count, err := tokens.For(g.model.Tokenizer); err == nil {
			if req, e := g.canonical(); e == nil {
				return ir.CountTokens(req, count)
			}
		}
	}
	if g.req != nil {
		return ir.EstimateTokens(g.req)
	}
	return len(g.body) / 4
}

// requestedMax is the client's max tokens (0 when absent).
func (g *generation) requestedMax() int {
	if g.req != nil {
		return g.req.MaxTokens
	}
	return g.chatReq.MaxTokens
}

// applyContextRule checks the request against the model's window (decisions.md, "Context")
// and works out the output cap to send when the client gave none.
//   - shared_window: input + output must fit in context_length, output in max_output_tokens.
//   - input_budget: context_length is the input's own budget.
func (g *generation) applyContextRule() *apiError {
	m := g.model
	in, want := g.estimateInput(), g.requestedMax()
	g.inputTokens = in
	ctx, maxOut := int(m.ContextLength), int(m.MaxOutputTokens)
	if maxOut > 0 && want > maxOut {
		// Clients send generic defaults (32000, 64000) to every model: more than this model
		// writes is served as its maximum, and the header says so.
		want, g.clamped = maxOut, maxOut
	}
	if ctx == 0 {
		return nil
	}
	if m.ContextRule == catalog.ContextInputBudget {
		if in > ctx {
			return contextErr(fmt.Sprintf("the input is about %d tokens, over model %s's input budget of %d tokens", in, m.ID, ctx))
		}
		return nil
	}
	out := max(want, 1)
	if in+out > ctx {
		return contextErr(fmt.Sprintf("the input is about %d tokens and the answer may take %d, over model %s's context window of %d tokens", in, out, m.ID, ctx))
	}
	if want == 0 {
		room := ctx - in
		if maxOut == 0 || maxOut > room {
			g.windowCap = room // the model's default answer would not fit: cap it
		}
	}
	return nil
}

// maxTokens is the client's max tokens as the gateway sends them (clamped to the model's).
func (g *generation) maxTokens() int {
	if g.clamped > 0 {
		return g.clamped
	}
	return g.requestedMax()
}

func contextErr(msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages", Message: msg}
}

// outputBound is the most the answer may take, for the cost reserved at admission.
func (g *generation) outputBound() int {
	switch {
	case g.maxTokens() > 0:
		return g.maxTokens()
	case g.windowCap > 0:
		return g.windowCap
	case g.model.MaxOutputTokens > 0:
		return int(g.model.MaxOutputTokens)
	}
	return defaultMaxTokens
}

// estimatedCost bounds what the call can cost: the input estimate at the prompt price and the
// output bound at the completion price.
func (g *generation) estimatedCost() money.Amount {
	p := g.model.Pricing
	return p.Prompt.Times(int64(g.inputTokens)) + p.Completion.Times(int64(g.outputBound()))
}

// maxTokensToSend is the cap a converted request carries when the client gave none, or the
// client's clamped to the model's.
func (g *generation) maxTokensToSend(routeFormat string) int {
	if g.clamped > 0 {
		return g.clamped
	}
	if g.windowCap > 0 {
		return g.windowCap
	}
	if routeFormat == catalog.FormatMessages { // required by the format
		return g.outputBound()
	}
	return 0
}
