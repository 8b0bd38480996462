package ir

// Per-item overheads of the estimate: what chat templates add around each message, and
// the least an image costs (a low-detail image in the chat format), because the estimate
// decides refusals and must not refuse a request that fits.
const (
	messageOverhead = 4
	imageTokens     = 85
)

// EstimateTokens is a conservative count of a request's input tokens without a tokenizer:
// one token per three bytes of text (tokenizers average about four for English and fewer for
// code and other scripts, so this errs high), plus fixed costs per message and image.
func EstimateTokens(r *Request) int {
	return CountTokens(r, func(s string) int { return (len(s) + 2) / 3 })
}

// CountTokens counts a request's input tokens with a text counter (a real tokenizer when
// the model's family has one), adding the same per-message and per-image costs.
func CountTokens(r *Request, count func(string) int) int {
	n := 0
	text := func(s string) { n += count(s) }
	var parts func([]Part)
	parts = func(ps []Part) {
		for _, p := range ps {
			switch p.Kind {
			case PartText:
				text(p.Text)
			case PartImage:
				n += imageTokens
			case PartFile:
				n += (len(p.File.Data)*3/4 + 2) / 3
			case PartToolCall:
				text(p.ToolCall.Name)
				text(p.ToolCall.Arguments)
			case PartToolResult:
				parts(p.ToolResult.Content)
			case PartReasoning:
				text(p.Reasoning.Text)
			}
		}
	}
	for _, m := range r.Messages {
		n += messageOverhead
		parts(m.Parts)
	}
	for _, t := range r.Tools {
		text(t.Name)
		text(t.Description)
		text(string(t.Parameters))
	}
	return n
}
