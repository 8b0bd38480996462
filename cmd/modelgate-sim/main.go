// Command modelgate-sim runs the upstream simulator as a standalone process, for the demo
// (make run), the bench harness and multi-process tests. It speaks OpenAI Chat Completions
// and Responses, Anthropic Messages and Gemini generateContent, and Amazon Bedrock, Vertex AI
// and Azure OpenAI, on the default route and on /r/{route}/...; steer routes over HTTP with
// PUT /_sim/routes/{route}; see package simulator. -google-key-file writes the service-account
// key file Vertex routes authenticate with (GET /_sim/google/service-account serves it too).
// It also fakes a Stripe account (stripe-go's backend URL is the base URL);
// -stripe-webhook and -stripe-webhook-secret set the endpoint its events are sent to
// (PUT /_sim/stripe/webhook sets more).
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
	keyFile := flag.String("google-key-file", "", "write a service-account key file for Vertex routes here "+
		"(token_uri: this simulator's /oauth2/token)")
	stripeWebhook := flag.String("stripe-webhook", "", "send the fake Stripe's events to this URL")
	stripeSecret := flag.String("stripe-webhook-secret", "", "sign them with this secret (required with -stripe-webhook)")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if (*stripeWebhook == "") != (*stripeSecret == "") {
		log.Error("modelgate-sim: -stripe-webhook and -stripe-webhook-secret go together")
		os.Exit(2)
	}

	sim, base, stop, err := simulator.Start(*addr)
	if err != nil {
		log.Error("modelgate-sim: cannot start", "err", err)
		os.Exit(1)
	}
	if *keyFile != "" {
		// 0600: the file holds a private key, if only the simulator's.
		if err := os.WriteFile(*keyFile, sim.ServiceAccountJSON(base+"/oauth2/token"), 0o600); err != nil {
			log.Error("modelgate-sim: cannot write the key file", "err", err)
			stop()
			os.Exit(1)
		}
	}
	if *stripeWebhook != "" {
		sim.StripeWebhook(*stripeWebhook, *stripeSecret)
	}
	// Only addresses are logged, never request contents (prompts may be real user data) nor
	// the webhook secret.
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
		"bedrock", base+"/r/{route}/model/{modelId}/invoke",
		"bedrock_access_key_id", simulator.AWSAccessKeyID,
		"vertex", base+"/r/{route}/v1/projects/{project}/locations/{location}/publishers/{google|anthropic}/models/{model}:{method}",
		"google_token_uri", base+"/r/{route}/oauth2/token",
		"azure", base+"/r/{route}/openai/deployments/{deployment}/chat/completions?api-version={version}",
		"entra_token", base+"/r/{route}/{tenant}/oauth2/v2.0/token",
		"stripe_api", base,
		"stripe_webhook", *stripeWebhook,
		"control", base+"/_sim/routes/{route}")

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	<-ctx.Done()
	log.Info("modelgate-sim stopping")
	stop()
}
