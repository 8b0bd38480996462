// Command modelgate-sim runs the upstream simulator as a standalone process, for the demo
// (make run), the bench harness and multi-process tests. It speaks OpenAI Chat Completions
// and Responses, Anthropic Messages and Gemini generateContent, on the default route and on
// /r/{route}/...; steer routes over HTTP with PUT /_sim/routes/{route}; see package simulator.
package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/modelgate/modelgate/simulator"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "listen address host:port (port 0 picks a free port)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	_, base, stop, err := simulator.Start(*addr)
	if err != nil {
		log.Error("modelgate-sim: cannot start", "err", err)
		os.Exit(1)
	}
	// Only addresses are logged, never request contents: prompts may be real user data.
	log.Info("modelgate-sim listening",
		"base_url", base,
		"openai_base_url", base+"/v1",
		"anthropic_base_url", base,
		"gemini_base_url", base+"/v1beta",
		"route_base_url", base+"/r/{route}",
		"chat_completions", base+"/r/{route}/v1/chat/completions",
		"responses", base+"/r/{route}/v1/responses",
		"messages", base+"/r/{route}/v1/messages",
		"gemini", base+"/r/{route}/v1beta/models/{model}:generateContent",
		"control", base+"/_sim/routes/{route}")

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	log.Info("modelgate-sim stopping")
	stop()
}
