// Package bench measures the gateway against a direct call to the upstream simulator.
//
//	go test -run '^$' -bench Gateway -benchtime 3000x ./bench/
//
// The simulator, the gateway and the client share this process, so cpu-us/op is the whole
// process's CPU per request: the gateway's own CPU per request is the difference between the
// "gateway" and "direct" rows of the same run, and so is its added latency (ns/op at
// concurrency 1).
package bench

import (
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

const plainBody = `{"model":"chat","messages":[{"role":"user","content":"reply with 16 words"}]}`
const streamBody = `{"model":"chat","stream":true,"messages":[{"role":"user","content":"reply with 16 words"}]}`

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func post(b *testing.B, c *http.Client, url, key, body string) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

func BenchmarkGateway(b *testing.B) {
	// A plan without limits: the benchmark measures the gateway, not its refusals.
	env := nodetest.Start(b, nodetest.DefaultCatalog+"plans:\n  - {name: bench, allow_automated: true}\n", nodetest.Options{Plan: "bench"})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	targets := []struct {
		name, url, key string
	}{
		{"direct", env.SimURL + "/r/a/v1/chat/completions", "sim-test-credential"},
		{"gateway", env.Node.URL + "/v1/chat/completions", env.Key},
	}
	for _, kind := range []struct{ name, body string }{{"plain", plainBody}, {"stream", streamBody}} {
		for _, tg := range targets {
			b.Run(kind.name+"/"+tg.name, func(b *testing.B) {
				post(b, client, tg.url, tg.key, kind.body) // warm the connection
				b.ReportAllocs()
				b.ResetTimer()
				cpu0 := cpuTime()
				for i := 0; i < b.N; i++ {
					post(b, client, tg.url, tg.key, kind.body)
				}
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/op")
			})
		}
	}
}
