package simulator

import (
	"fmt"
	"regexp"
)

// Golden transcripts (testdata/sim/*) are simulator output with what varies between runs
// replaced: ids and timestamps. Everything else — words, signatures, usage, event order and
// framing — is deterministic.

var (
	// transcriptIDRe matches the ids the simulator mints: a known prefix and 24 hex digits
	// (video_ for video jobs, file_ in generated-file URLs, the cloud platforms' msg_bdrk_,
	// toolu_vrtx_, … and Converse's tooluse_), or Gemini's bare responseId.
	transcriptIDRe = regexp.MustCompile(`\b(chatcmpl-|msg_bdrk_|msg_vrtx_|msg_|toolu_bdrk_|toolu_vrtx_|toolu_|tooluse_|resp_|rs_|fc_|call_|req_|video_|file_)[0-9a-f]{24}\b|("responseId":\s*")[0-9a-f]{24}"`)
	// transcriptTimeRe matches unix timestamps (chat "created", Responses "created_at" and
	// "completed_at").
	transcriptTimeRe = regexp.MustCompile(`"(created|created_at|completed_at)":(\s*)[0-9]+`)
)

// NormalizeTranscript makes a simulator response comparable with a golden transcript: each
// distinct id becomes its prefix plus a 24-hex-digit counter in order of first appearance
// (so an id repeated across events stays one id), and every timestamp becomes 1700000000.
// It is idempotent, so gateway tests can apply it to their own output and to a fixture alike.
func NormalizeTranscript(b []byte) []byte {
	seen := map[string]string{}
	b = transcriptIDRe.ReplaceAllFunc(b, func(id []byte) []byte {
		if n, ok := seen[string(id)]; ok {
			return []byte(n)
		}
		m := transcriptIDRe.FindSubmatch(id)
		prefix, suffix := m[1], ""
		if m[2] != nil {
			prefix, suffix = m[2], `"`
		}
		n := fmt.Sprintf("%s%024x%s", prefix, len(seen)+1, suffix)
		seen[string(id)] = n
		return []byte(n)
	})
	return transcriptTimeRe.ReplaceAll(b, []byte(`"$1":${2}1700000000`))
}
