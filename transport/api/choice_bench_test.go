package api

import (
	"testing"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/chat"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// What choosing the model costs a chat request (the aim: an auto model's choice adds < 20 µs
// CPU): the request's models made and the first set up — a model alone (small), one with catalog
// fallbacks, and an auto model over three candidates (the bench's: one without tools, one on a
// messages route, one priced over the others), ordered by price. Admission's estimate included.
//
//	go test -run '^$' -bench ModelChoice -benchtime 20000x ./transport/api/
const choiceCatalog = `
models:
  - id: plain
    kind: chat
    context_length: 128000
    max_output_tokens: 8192
    pricing: {prompt: "0.000001", completion: "0.000002"}
    fallbacks: [small, dear]
    routes:
      - {id: p, format: chat, base_url: "http://127.0.0.1:1/v1", upstream_model: m}
  - id: auto
    kind: chat
    auto: {policy: cheapest, candidates: [dear, plain, small]}
  - id: small
    kind: chat
    tools: false
    context_length: 128000
    max_output_tokens: 8192
    pricing: {prompt: "0.0000005", completion: "0.000001"}
    routes:
      - {id: s, format: chat, base_url: "http://127.0.0.1:1/v1", upstream_model: m}
  - id: dear
    kind: chat
    context_length: 128000
    max_output_tokens: 8192
    pricing: {prompt: "0.000003", completion: "0.000015"}
    routes:
      - {id: d, format: messages, base_url: "http://127.0.0.1:1/v1", upstream_model: m}
`

func BenchmarkModelChoice(b *testing.B) {
	cat, err := catalog.Parse("choice.yaml", []byte(choiceCatalog))
	if err != nil {
		b.Fatal(err)
	}
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		b.Fatal(err)
	}
	board := routehealth.NewBoard(placement.NewLocal(e), routehealth.DefaultPolicy())
	board.Sync(cat.Routes())
	s := New(Deps{Board: board})
	x := &exchange{catalog: cat, key: persistence.Key{Models: []string{}}}
	for _, model := range []string{"small", "plain", "auto"} {
		body := []byte(`{"model":"` + model + `","messages":[{"role":"system","content":"` + benchSystem + `"},{"role":"user","content":"Say hello, reply with 16 words"}]}`)
		b.Run(model, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				req, err := chat.ParseRequest(body)
				if err != nil {
					b.Fatal(err)
				}
				t := &turn{spec: chatClient, body: body, chatReq: req, clientModel: req.Model}
				if e := s.prepare(x, t); e != nil {
					b.Fatal(e.Message)
				}
				_ = t.estimate()
				_ = t.choice.units()
			}
		})
	}
}
