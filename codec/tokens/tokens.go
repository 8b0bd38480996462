// Package tokens counts text tokens with a real tokenizer where one is available offline (the
// BPE vocabularies embedded in tiktoken-go-loader), and estimates otherwise.
package tokens

import (
	"fmt"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
)

// Names of the vocabularies a catalog model may name in `tokenizer`.
var Names = []string{"o200k_base", "cl100k_base", "p50k_base", "r50k_base"}

// Counter counts the tokens of a text.
type Counter func(text string) int

// Estimate is the fallback: one token per three bytes, which errs high for English and code.
func Estimate(text string) int { return (len(text) + 2) / 3 }

var (
	mu       sync.Mutex
	counters = map[string]Counter{}
	once     sync.Once
)

// For returns the counter of a vocabulary, loading it on first use (a vocabulary takes
// tens of megabytes, so only the ones a catalog names are ever loaded). An empty name is
// the estimate.
func For(name string) (Counter, error) {
	if name == "" {
		return Estimate, nil
	}
	mu.Lock()
	defer mu.Unlock()
	if c, ok := counters[name]; ok {
		return c, nil
	}
	if !Known(name) {
		return nil, fmt.Errorf("unknown tokenizer %q (known: %v)", name, Names)
	}
	once.Do(func() { tiktoken.SetBpeLoader(loader.NewOfflineLoader()) })
	enc, err := tiktoken.GetEncoding(name)
	if err != nil {
		return nil, fmt.Errorf("tokenizer %s: %w", name, err)
	}
	c := func(text string) int { return len(enc.EncodeOrdinary(text)) }
	counters[name] = c
	return c, nil
}

// Known reports whether name is a vocabulary this build carries.
func Known(name string) bool {
	for _, n := range Names {
		if n == name {
			return true
		}
	}
	return false
}
