package simulator

import "net/http"

// Azure OpenAI's chat answers: OpenAI's, annotated with what Azure's content filters found. A
// whole answer carries prompt_filter_results (per prompt, with the jailbreak check) and per
// choice content_filter_results; a stream opens with a preamble chunk (no choices, empty id,
// model and object, created 0) holding prompt_filter_results, and its content chunks carry
// content_filter_results (empty on the role, tool-call and finish chunks). An answer the
// filter caught (the "content filter" directive, answer.go) is withheld: no content, no tool
// calls, finish_reason "content_filter", the finish carrying the results that caught it. Its
// usage still counts the tokens generated, as Azure bills them.

func (s *Server) azureChat(ex *exchange) {
	q, req, apiErr := decodeChat(ex.body)
	if apiErr != nil {
		writeOpenAIError(ex.w, *apiErr)
		return
	}
	a := s.chatAnswerFor(req.Model, decide(q))
	if a.answer.filtered {
		a.answer.words, a.answer.calls, a.toolCalls, a.finish = nil, nil, nil, "content_filter"
	}
	if req.Stream {
		sc := chatChunks(a, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
		playChatStream(ex, azureChunks(sc.events), sc.failed)
		return
	}
	writeJSON(ex.w, http.StatusOK, azureCompletionBody(a))
}

// safeCategory is a harm category the filter passed.
func safeCategory() obj { return obj{{"filtered", false}, {"severity", "safe"}} }

// undetected is a detector that found nothing.
func undetected() obj { return obj{{"filtered", false}, {"detected", false}} }

// promptFilterResults are the prompt annotations: every category safe.
func promptFilterResults() []obj {
	return []obj{{{"prompt_index", 0}, {"content_filter_results", obj{{"hate", safeCategory()},
		{"jailbreak", undetected()}, {"self_harm", safeCategory()}, {"sexual", safeCategory()}, {"violence", safeCategory()}}}}}
}

// completionFilterResults are the annotations of generated text: every category safe, or
// violence at high severity for a filtered answer.
func completionFilterResults(filtered bool) obj {
	violence := safeCategory()
	if filtered {
		violence = obj{{"filtered", true}, {"severity", "high"}}
	}
	return obj{{"hate", safeCategory()}, {"protected_material_code", undetected()}, {"protected_material_text", undetected()},
		{"self_harm", safeCategory()}, {"sexual", safeCategory()}, {"violence", violence}}
}

type azureChoice struct {
	chatChoice
	ContentFilterResults obj `json:"content_filter_results"`
}

// azureCompletion is chatCompletion whose choices carry filter results (its own Choices
// hides the embedded one) plus the prompt's.
type azureCompletion struct {
	chatCompletion
	Choices             []azureChoice `json:"choices"`
	PromptFilterResults []obj         `json:"prompt_filter_results"`
}

func azureCompletionBody(a chatAnswer) azureCompletion {
	c := completionBody(a)
	out := azureCompletion{chatCompletion: c, PromptFilterResults: promptFilterResults()}
	for _, ch := range c.Choices {
		results := obj{} // tool calls are not text the filter reads
		switch {
		case a.finish == "content_filter":
			ch.Message.Content = nil
			results = completionFilterResults(true)
		case len(a.toolCalls) == 0:
			results = completionFilterResults(false)
		}
		out.Choices = append(out.Choices, azureChoice{chatChoice: ch, ContentFilterResults: results})
	}
	return out
}

type azureChunkChoice struct {
	chunkChoice
	ContentFilterResults obj `json:"content_filter_results"`
}

type azureChunk struct {
	chatChunk
	Choices []azureChunkChoice `json:"choices"`
}

// azurePreamble is the first chunk of every Azure chat stream.
func azurePreamble() obj {
	return obj{{"choices", []obj{}}, {"created", 0}, {"id", ""}, {"model", ""}, {"object", ""},
		{"prompt_filter_results", promptFilterResults()}}
}

// azureChunks annotates a laid-out chat stream as Azure sends it: the preamble first, filter
// results on every chunk with choices. The usage chunk and a mid-stream error pass as they are.
func azureChunks(events []sseEvent) []sseEvent {
	out := []sseEvent{{data: azurePreamble()}}
	for _, ev := range events {
		c, ok := ev.data.(chatChunk)
		if !ok || len(c.Choices) == 0 {
			out = append(out, ev)
			continue
		}
		choices := make([]azureChunkChoice, len(c.Choices))
		for i, ch := range c.Choices {
			results := obj{}
			switch {
			case ch.FinishReason != nil && *ch.FinishReason == "content_filter":
				results = completionFilterResults(true)
			case isContentDelta(ch.Delta):
				results = completionFilterResults(false)
			}
			choices[i] = azureChunkChoice{chunkChoice: ch, ContentFilterResults: results}
		}
		out = append(out, sseEvent{name: ev.name, data: azureChunk{chatChunk: c, Choices: choices}})
	}
	return out
}

// isContentDelta reports whether a chunk's delta carries text.
func isContentDelta(d any) bool {
	_, ok := d.(contentDelta)
	return ok
}
