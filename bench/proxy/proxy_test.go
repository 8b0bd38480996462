package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/simulator"
)

func TestProxyStreamsUnbuffered(t *testing.T) {
	sim, simURL, stop, err := simulator.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	// 20 chunks a second: an unbuffered proxy hands over the first long before the last.
	sim.SetBehavior("slow", simulator.Behavior{TokensPerSecond: 20})
	up, _ := url.Parse(simURL)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, up) }()

	base := "http://" + ln.Addr().String()
	req, _ := http.NewRequest("POST", base+"/r/slow/v1/chat/completions",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"reply with 8 words"}]}`))
	req.Header.Set("Authorization", "Bearer x")
	t0 := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	first := time.Since(t0)
	rest, _ := io.ReadAll(br)
	total := time.Since(t0)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(rest), "[DONE]") {
		t.Fatalf("status %d body %q", resp.StatusCode, rest)
	}
	if first > total/2 {
		t.Errorf("first line after %v of %v: the proxy buffers", first, total)
	}
	if sim.Calls("slow") != 1 {
		t.Errorf("simulator saw %d calls", sim.Calls("slow"))
	}
	if r, err := http.Get(base + "/healthz"); err != nil || r.StatusCode != 200 {
		t.Errorf("healthz: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// Sequential streamed POSTs must all arrive whole. Without full duplex about one in thirty
// was cut short (golang/go#40747: the server closes the inbound body when the response
// starts, and the transport's last read of it tears down the upstream connection).
func TestProxyStreamsComplete(t *testing.T) {
	_, simURL, stop, err := simulator.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	up, _ := url.Parse(simURL)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Serve(ctx, ln, up)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	const body = `{"model":"m","stream":true,"messages":[{"role":"user","content":"reply with 16 words"}]}`
	cut := 0
	for range 300 {
		req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/r/x/v1/chat/completions", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer x")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !strings.Contains(string(b), "data: [DONE]") {
			cut++
		}
	}
	if cut > 0 {
		t.Errorf("%d of 300 streams cut short", cut)
	}
}
