// Package browsertest drives Debian's headless Chromium from Go tests (through chromedp)
// and runs a loopback SMTP server that keeps the mail a gateway sends, so that a test can
// walk the dashboard as a person does: fill forms, click, follow a mailed link, read the page.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

const (
	// RequireEnv set to 1 (CI sets it) makes a missing Chromium fail the test instead of
	// skipping it.
	RequireEnv = "MODELGATE_REQUIRE_BROWSER"
	// ScreenshotsEnv names a directory to keep the screenshots in (one folder per test);
	// unset, they go to the test's artifact directory (go test -artifacts keeps it).
	ScreenshotsEnv = "MODELGATE_SCREENSHOTS"
)

// stepTimeout bounds one browser step (a click, a wait for text): a page that never shows
// what the test waits for fails the test with what it shows instead.
const stepTimeout = 15 * time.Second

// ChromiumPath finds Debian's chromium (or Ubuntu's chromium-browser) on PATH.
func ChromiumPath() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("neither chromium nor chromium-browser is on PATH (Debian: apt-get install chromium)")
}

// Browser is one headless Chromium with one tab, stopped by the test's cleanup.
type Browser struct {
	tb      testing.TB
	ctx     context.Context
	shotDir string
	shots   int

	mu       sync.Mutex
	problems []string // uncaught exceptions, console errors, refused loads (CSP)
}

// Start starts Chromium for tb, or skips tb when there is none (fails it when RequireEnv is 1).
func Start(tb testing.TB) *Browser {
	tb.Helper()
	path, err := ChromiumPath()
	if err != nil {
		if os.Getenv(RequireEnv) == "1" {
			tb.Fatalf("browser test: %v; %s=1 requires it", err, RequireEnv)
		}
		tb.Skipf("browser test skipped: %v; set %s=1 to make this a failure", err, RequireEnv)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(1280, 900),
		// Containers (and root, which CI is) have no user namespaces for Chromium's sandbox;
		// the browser only opens the test's own loopback pages.
		chromedp.NoSandbox,
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// The first run starts the browser and must not carry a timeout (it would end the browser).
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		tb.Fatalf("start %s: %v", path, err)
	}
	b := &Browser{tb: tb, ctx: ctx}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			b.noteConsole(m)
		}
	}()
	tb.Cleanup(func() {
		cancel()
		cancelAlloc()
		<-done
	})
	return b
}

// Use makes the browser report to tb (a subtest of the test that started it) and save its
// screenshots in tb's folder: subtests share one browser, which starts in about a second.
func (b *Browser) Use(tb testing.TB) {
	b.tb, b.shotDir, b.shots = tb, "", 0
}

// noteConsole keeps what a page should never print. A refused fetch's "Failed to load
// resource" line is not kept: the API's 4xx answers are part of what pages handle.
func (b *Browser) noteConsole(m chromedp.ConsoleMessage) {
	if m.Type != chromedp.ConsoleError && !m.IsException() {
		return
	}
	if m.Source == "network" && strings.HasPrefix(m.Text, "Failed to load resource") {
		return
	}
	b.mu.Lock()
	b.problems = append(b.problems, fmt.Sprintf("%s (%s:%d)", m.String(), m.URL, m.Line))
	b.mu.Unlock()
}

// Problems are the exceptions, console errors and refused loads (a CSP violation is one)
// seen so far.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// ExpectNoProblems fails the test when a page threw, logged an error or broke its CSP.
func (b *Browser) ExpectNoProblems() {
	b.tb.Helper()
	time.Sleep(100 * time.Millisecond) // the console's last events arrive after the action that caused them
	for _, p := range b.Problems() {
		b.tb.Errorf("browser console: %s", p)
	}
}

func (b *Browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.tb.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.tb.Fatalf("%s: %v (page %s)", what, err, b.URL())
	}
}

// Open loads url and waits for its load event.
func (b *Browser) Open(url string) {
	b.tb.Helper()
	b.do("open "+url, chromedp.Navigate(url))
}

// Fill types value into the field sel (a CSS selector) after clearing it, as a person would.
func (b *Browser) Fill(sel, value string) {
	b.tb.Helper()
	b.setValue(sel, "") // and focus it: the keys go to the focused control
	b.do("fill "+sel, chromedp.KeyEvent(value))
}

// SetValue sets a field's value directly, for the controls typing cannot fill (dates,
// selects), and fires the input and change events typing would.
func (b *Browser) SetValue(sel, value string) {
	b.tb.Helper()
	b.setValue(sel, value)
}

func (b *Browser) setValue(sel, value string) {
	b.tb.Helper()
	var ok bool
	err := b.Eval(`(e => { if (!e) return false; e.focus(); e.value = `+jsString(value)+`;
		e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true}));
		return e.value === `+jsString(value)+`; })(document.querySelector(`+jsString(sel)+`))`, &ok)
	if err != nil || !ok {
		b.tb.Fatalf("set %s to %q: no such control or value refused (%v) on %s", sel, value, err, b.URL())
	}
}

// Click clicks the middle of the element sel with the mouse, once it is shown. It finds the
// element by script each time, so a page that was just replaced is no obstacle.
func (b *Browser) Click(sel string) {
	b.tb.Helper()
	b.WaitVisible(sel)
	// A submit button clicked before its page's module has bound the form would submit it
	// the browser's way (a reload); on a loaded machine that happened (forms.js marks it).
	b.WaitFor("the form of "+sel+" to be bound",
		`(e => { const f = e.closest("form"); return !f || e.type !== "submit" || f.dataset.bound === "true"; })(document.querySelector(`+jsString(sel)+`))`,
		func() string { return "" })
	b.clickStill(sel)
}

// ClickForeign clicks sel on a page that is not the dashboard's (a payment provider's), whose
// forms submit the browser's way: Click's wait for the dashboard's binding does not apply.
func (b *Browser) ClickForeign(sel string) {
	b.tb.Helper()
	b.WaitVisible(sel)
	b.clickStill(sel)
}

// clickStill clicks the middle of sel once it holds still.
func (b *Browser) clickStill(sel string) {
	b.tb.Helper()
	// The click goes where the element is once the page holds still: a list that a page
	// loads meanwhile (the keys above their form) moves the element, and a click at the
	// place it left lands on something else.
	type point struct{ X, Y float64 }
	var at, last point
	for try := 0; ; try++ {
		err := b.Eval(`(e => { e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect();
			return {X: r.left + r.width / 2, Y: r.top + r.height / 2}; })(document.querySelector(`+jsString(sel)+`))`, &at)
		if err != nil {
			b.tb.Fatalf("click %s: %v", sel, err)
		}
		if (try > 0 && at == last) || try == 50 {
			break
		}
		last = at
		time.Sleep(20 * time.Millisecond)
	}
	b.do("click "+sel, chromedp.MouseClickXY(at.X, at.Y))
}

// Eval evaluates a JavaScript expression and decodes its JSON value into out.
func (b *Browser) Eval(expr string, out any) error {
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string]("JSON.stringify("+expr+")"))
	if err != nil {
		return err
	}
	return json.Unmarshal([]byte(s), out)
}

func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// Text is the text content of the element sel ("" when there is none).
func (b *Browser) Text(sel string) string {
	var s string
	b.Eval("document.querySelector("+jsString(sel)+")?.textContent ?? ''", &s)
	return strings.TrimSpace(s)
}

// Attr is the attribute name of the element sel ("" when either is missing).
func (b *Browser) Attr(sel, name string) string {
	var s string
	b.Eval("document.querySelector("+jsString(sel)+")?.getAttribute("+jsString(name)+") ?? ''", &s)
	return s
}

// Value is the value of the form control sel.
func (b *Browser) Value(sel string) string {
	var s string
	b.Eval("document.querySelector("+jsString(sel)+")?.value ?? ''", &s)
	return s
}

// Hidden reports whether the element sel is missing or hidden (by itself or an ancestor).
func (b *Browser) Hidden(sel string) bool {
	var hidden bool
	b.Eval("(e => !e || Boolean(e.closest('[hidden]')))(document.querySelector("+jsString(sel)+"))", &hidden)
	return hidden
}

// Count is how many elements match sel.
func (b *Browser) Count(sel string) int {
	var n int
	b.Eval("document.querySelectorAll("+jsString(sel)+").length", &n)
	return n
}

// URL is the tab's address.
func (b *Browser) URL() string {
	var s string
	b.Eval("location.href", &s)
	return s
}

// WaitFor polls the JavaScript condition until it is true; it survives navigations (a
// page that is replaced meanwhile is asked again), and fails the test with describe() after
// stepTimeout.
func (b *Browser) WaitFor(what, condition string, describe func() string) {
	b.tb.Helper()
	deadline := time.Now().Add(stepTimeout)
	for {
		var ok bool
		if err := b.Eval("Boolean("+condition+")", &ok); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.tb.Fatalf("waited %s for %s: %s", stepTimeout, what, describe())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitText waits until the element sel exists and its text contains want; it returns the text.
func (b *Browser) WaitText(sel, want string) string {
	b.tb.Helper()
	cond := "(document.querySelector(" + jsString(sel) + ")?.textContent ?? '').includes(" + jsString(want) + ")"
	b.WaitFor(fmt.Sprintf("%q in %s", want, sel), cond, func() string {
		return fmt.Sprintf("%s shows %q on %s; page error %q", sel, b.Text(sel), b.URL(), b.Text("#page-error"))
	})
	return b.Text(sel)
}

// WaitVisible waits until the element sel exists and is shown.
func (b *Browser) WaitVisible(sel string) {
	b.tb.Helper()
	cond := "(e => e && !e.closest('[hidden]') && e.getClientRects().length > 0)(document.querySelector(" + jsString(sel) + "))"
	b.WaitFor(sel+" to show", cond, func() string {
		return fmt.Sprintf("not shown on %s; page error %q", b.URL(), b.Text("#page-error"))
	})
}

// WaitPath waits until the tab's path (without the query) is path and its page has loaded
// (a form of the page before would be gone under the test's next step).
func (b *Browser) WaitPath(path string) {
	b.tb.Helper()
	b.WaitFor("path "+path, "location.pathname === "+jsString(path)+` && document.readyState === "complete"`, b.URL)
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Screenshot saves a full-page PNG of the tab as NN-name.png and returns its path; the
// folder is logged with the first one.
func (b *Browser) Screenshot(name string) string {
	b.tb.Helper()
	if b.shotDir == "" {
		b.shotDir = screenshotDir(b.tb)
		b.tb.Logf("screenshots: %s", b.shotDir)
	}
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.tb.Fatalf("screenshot %s: %v", name, err)
	}
	b.shots++
	path := filepath.Join(b.shotDir, fmt.Sprintf("%02d-%s.png", b.shots, unsafeName.ReplaceAllString(name, "-")))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.tb.Fatal(err)
	}
	return path
}

func screenshotDir(tb testing.TB) string {
	root := os.Getenv(ScreenshotsEnv)
	if root == "" {
		return tb.ArtifactDir()
	}
	dir, err := filepath.Abs(filepath.Join(root, unsafeName.ReplaceAllString(tb.Name(), "-")))
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}
