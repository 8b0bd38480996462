// Package dashboard is the web dashboard's assets and their serving: plain HTML pages,
// one stylesheet and vanilla JavaScript modules, embedded in the binary and served under
// /dashboard/. The pages call the session API (/auth/*) and the account API (/account/v1/*)
// from the browser; nothing here talks to the store.
package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
)

// Prefix is the path the dashboard is served under.
const Prefix = "/dashboard/"

//go:embed web
var webFS embed.FS

// ContentSecurityPolicy allows the page's own origin only: no inline script or style, no
// third-party fonts or scripts, no framing. connect-src 'self' keeps the pages' fetches on
// the gateway that served them.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// Page is one dashboard page: its path under Prefix and what the layout needs to know.
type Page struct {
	Name   string // the path under Prefix and the module pages/<Name>.js
	Title  string
	Authed bool // needs a session: the layout shows the account navigation
}

// Pages are every page the dashboard serves, in navigation order for the authed ones.
// The overview is also the dashboard's root, /dashboard/.
var Pages = []Page{
	{Name: "overview", Title: "Overview", Authed: true},
	{Name: "keys", Title: "API keys", Authed: true},
	{Name: "usage", Title: "Usage", Authed: true},
	{Name: "credits", Title: "Credits", Authed: true},
	{Name: "plan", Title: "Plan", Authed: true},
	{Name: "signup", Title: "Sign up"},
	{Name: "verify", Title: "Verify your e-mail"},
	{Name: "login", Title: "Log in"},
	{Name: "forgot", Title: "Forgot password"},
	{Name: "reset", Title: "Choose a new password"},
}

// Handler serves the dashboard: the pages at Prefix+name (Prefix itself is the overview)
// and the assets under Prefix+"assets/". Mount it on Prefix without stripping it.
func Handler() http.Handler {
	rendered, err := renderPages()
	if err != nil {
		panic(err) // the embedded templates are part of the binary: a test catches this
	}
	assets, _ := fs.Sub(webFS, "web/assets")
	files := http.StripPrefix(Prefix+"assets/", http.FileServer(http.FS(assets)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		// Reset and verification links carry their token in the query: never sent onwards.
		h.Set("Referrer-Policy", "no-referrer")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rest, ok := strings.CutPrefix(r.URL.Path, Prefix)
		if !ok {
			http.NotFound(w, r)
			return
		}
		if strings.HasPrefix(rest, "assets/") && !strings.HasSuffix(rest, "/") {
			h.Set("Cache-Control", "no-cache")
			files.ServeHTTP(w, r)
			return
		}
		if rest == "" {
			rest = "overview"
		}
		page, ok := rendered[rest]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		w.Write(page)
	})
}

// renderPages renders every page once: the pages are static, their data comes from the API.
func renderPages() (map[string][]byte, error) {
	layout, err := template.ParseFS(webFS, "web/layout.html")
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(Pages))
	for _, p := range Pages {
		t, err := layout.Clone()
		if err == nil {
			t, err = t.ParseFS(webFS, "web/pages/"+p.Name+".html")
		}
		var buf bytes.Buffer
		if err == nil {
			err = t.ExecuteTemplate(&buf, "layout", struct {
				Page
				Nav []Page
			}{p, navPages()})
		}
		if err != nil {
			return nil, fmt.Errorf("dashboard page %s: %w", p.Name, err)
		}
		out[p.Name] = buf.Bytes()
	}
	return out, nil
}

func navPages() []Page {
	var nav []Page
	for _, p := range Pages {
		if p.Authed {
			nav = append(nav, p)
		}
	}
	return nav
}
