package step

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// t0 is a Wednesday noon (unix ns); tests move from here.
var t0 = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC).UnixNano()

const sec = int64(time.Second)

// plan parses one plan entry (YAML flow mapping) through the catalog's validator.
func plan(t testing.TB, entry string) Plan {
	t.Helper()
	doc := "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\nplans:\n  - " + entry + "\n"
	c, err := catalog.Parse("test.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return PlanOf(c.Plans()[0])
}

// admitAt admits one plain call of key at now.
func admitAt(a *Account, p Plan, key string, now int64) Result {
	return Apply(a, &Command{Kind: Admit, Now: now, Plan: p, Key: key, TTL: int64(time.Hour)})
}

// callAt admits and, when admitted, settles one counted call at now.
func callAt(a *Account, p Plan, key string, now int64) Result {
	r := admitAt(a, p, key, now)
	if r.Admitted {
		Apply(a, &Command{Kind: Settle, Now: now, ID: r.ID, Counts: true})
	}
	return r
}
