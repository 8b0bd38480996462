// Package sdktest holds end-to-end tests in which the official OpenAI, Anthropic and Google
// (go-genai) Go SDKs are the clients: each test starts the upstream simulator and a gateway
// node (transport/node/nodetest) and drives every client endpoint against every upstream
// format. The package has no non-test code.
package sdktest
