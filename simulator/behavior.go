package simulator

import (
	"context"
	"math"
	"time"
)

// Behavior is how one route misbehaves. The zero value is a healthy upstream that answers at
// once and streams as fast as the client reads.
type Behavior struct {
	// FirstByteDelay is waited before anything is written (headers included), so it looks like
	// a slow time-to-first-token. A client that disconnects meanwhile ends the wait.
	FirstByteDelay time.Duration
	// TokensPerSecond paces streamed chunks: chunk i is sent no earlier than i/TokensPerSecond
	// after the first. 0 sends them as fast as possible. A chunk is one event of the stream (a
	// chat chunk, an Anthropic or Responses event, a Gemini response chunk, a Bedrock
	// event-stream message); terminators such as data: [DONE] are not chunks.
	TokensPerSecond float64
	// FailStatus, if non-zero, makes calls fail with this HTTP status (429, 500, 503, 529, ...)
	// and the format's error body.
	FailStatus int
	// RetryAfter, in seconds, is sent as the Retry-After header on injected failures when > 0,
	// and as a polling hint on successful polls of a video job that has not ended.
	RetryAfter int
	// FailKind, if set, makes failing calls a provider refusal (FailRetryHint, FailQuota)
	// instead of FailStatus's ordinary error: each format writes it as its provider does,
	// with that provider's status (FailStatus is then ignored).
	FailKind FailKind
	// RetryDelay is a FailKind failure's retry hint, written where the provider puts it
	// (fractions allowed: Gemini's RetryInfo says "34.4s"); 0 uses RetryAfter seconds. A
	// FailKind failure sends no Retry-After header.
	RetryDelay time.Duration
	// FailFraction (0..1) is the share of calls that fail with FailStatus or FailKind. 0 (or
	// >= 1) with either set means every call fails.
	FailFraction float64
	// DropAfterChunks, for streams, closes the TCP connection abruptly after this many chunks
	// (events, as for TokensPerSecond): no terminator, no [DONE], no message_stop, as when an
	// upstream dies mid-answer. 0 never drops.
	DropAfterChunks int
	// LongLineBytes, for SSE streams, sends one comment line of this many bytes (its ending
	// not counted) after LongLineAfterChunks chunks: an upstream whose stream carries a line
	// longer than a gateway should hold (0 sends none). A comment is what every SSE format
	// skips, so a reader that takes it whole sees the stream unchanged. Not sent in Gemini's
	// JSON-array stream (no alt=sse) nor in Bedrock's binary event streams, which have no
	// lines.
	LongLineBytes       int
	LongLineAfterChunks int
	// VideoDuration is how long a video job takes from creation to its end (completed or
	// failed); its progress grows linearly over it. 0 means one second. A job keeps the
	// duration in force when it was created, so changing the behaviour does not move running
	// jobs.
	VideoDuration time.Duration
	// VideoFailFraction (0..1) is the share of video jobs that end "failed" instead of
	// "completed". Each job is judged once, when it is created, in the same counter pattern as
	// FailFraction (0.5: every second job fails), independent of FailStatus. 0 never fails, 1
	// always does.
	VideoFailFraction float64
	// VideoOutputSeconds, when > 0, is the length of every completed clip, at most the
	// requested seconds: a provider that made a shorter clip than it was asked for. The job
	// states it as its "seconds" once completed, and the MP4 lasts that long. A job keeps
	// the value in force when it was created.
	VideoOutputSeconds int
	// ImageURL, when set, is the link every image of an images answer (POST
	// /images/generations) carries instead of the picture, whatever response_format asked for:
	// a provider whose answer points somewhere (a redirect to an internal address, a page that
	// is no image) for the gateway to download.
	ImageURL string
	// TokenLifetime is how long the access tokens issued by the route's token endpoints (the
	// Google JWT-bearer grant at /r/{route}/oauth2/token, the Entra client-credentials grant
	// at /r/{route}/{tenant}/oauth2/v2.0/token) stay valid; 0 means an hour. A token keeps the
	// lifetime in force when it was issued. The token endpoints are not API calls: the other
	// fields (delays, failures) do not apply to them, and Calls does not count them.
	TokenLifetime time.Duration
}

// defaultTokenLifetime is an access token's lifetime when Behavior.TokenLifetime is 0: what
// Google and Entra grant.
const defaultTokenLifetime = time.Hour

// tokenLifetime is the access-token lifetime in force.
func (b Behavior) tokenLifetime() time.Duration {
	if b.TokenLifetime <= 0 {
		return defaultTokenLifetime
	}
	return b.TokenLifetime
}

// defaultVideoDuration is the job duration when Behavior.VideoDuration is 0.
const defaultVideoDuration = time.Second

// fractionScale turns FailFraction into an integer rate so the failure pattern is exact
// (0.3 * 10 calls is exactly 3 failures, with no floating-point drift).
const fractionScale = 1_000_000

// failsAt reports whether call k (1-based, counted since the behaviour was set) fails. Call k
// fails when floor(k·f) steps past floor((k-1)·f): a counter instead of dice, so any n
// consecutive calls contain round-down-or-up(n·f) failures and a test can assert the count.
func (b Behavior) failsAt(k int64) bool {
	if !b.failing() {
		return false
	}
	if b.FailFraction <= 0 || b.FailFraction >= 1 {
		return true
	}
	return fractionHit(b.FailFraction, k)
}

// failing reports whether the behaviour injects failures at all.
func (b Behavior) failing() bool { return b.FailStatus != 0 || b.FailKind != "" }

// videoFailsAt reports whether video job k (1-based, counted since the behaviour was set)
// ends failed.
func (b Behavior) videoFailsAt(k int64) bool {
	switch {
	case b.VideoFailFraction <= 0:
		return false
	case b.VideoFailFraction >= 1:
		return true
	}
	return fractionHit(b.VideoFailFraction, k)
}

// videoDuration is the job duration in force, the default when none is set.
func (b Behavior) videoDuration() time.Duration {
	if b.VideoDuration <= 0 {
		return defaultVideoDuration
	}
	return b.VideoDuration
}

// fractionHit reports whether event k (1-based) of a series is one of the fraction f (0 < f
// < 1) that is hit: event k is hit when floor(k·f) steps past floor((k-1)·f).
func fractionHit(f float64, k int64) bool {
	rate := int64(math.Round(f * fractionScale))
	return k*rate/fractionScale != (k-1)*rate/fractionScale
}

// chunkInterval is the gap between streamed chunks that TokensPerSecond asks for.
func (b Behavior) chunkInterval() time.Duration {
	if b.TokensPerSecond <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / b.TokensPerSecond)
}

// sleepCtx waits d, or less if ctx ends first. It reports whether the full wait elapsed, so
// callers stop working for a client that has gone away.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
