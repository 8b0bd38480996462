// Package replay replays recorded provider traffic (testdata/recorded) through the gateway:
// a fake upstream on loopback serves each recording's status, headers and bytes — a cloud's
// recording (Bedrock, Vertex AI, Azure OpenAI) at that cloud's path, checking the cloud's
// credential — and every client format's official SDK reads the answer, which is checked
// against what an independent reference reader derives from the recording itself. The
// package has no non-test code.
package replay
