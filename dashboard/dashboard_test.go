package dashboard

import (
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, method, url string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

func TestPagesAndAssetsCarryTheSecurityHeaders(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	cases := []struct {
		method, path string
		status       int
		contentType  string
		contains     string
	}{
		{"GET", "/dashboard/", 200, "text/html; charset=utf-8", "<title>Overview · modelgate</title>"},
		{"GET", "/dashboard/overview", 200, "text/html; charset=utf-8", `<a href="/dashboard/overview" aria-current="page">Overview</a>`},
		{"GET", "/dashboard/keys", 200, "text/html; charset=utf-8", `<label for="create-budget">Budget in USD</label>`},
		{"GET", "/dashboard/usage", 200, "text/html; charset=utf-8", `<script type="module" src="/dashboard/assets/js/pages/usage.js"></script>`},
		{"GET", "/dashboard/credits", 200, "text/html; charset=utf-8", `<h1>Credits</h1>`},
		{"GET", "/dashboard/plan", 200, "text/html; charset=utf-8", `<h1>Plan</h1>`},
		{"GET", "/dashboard/signup", 200, "text/html; charset=utf-8", `<input id="password" name="password" type="password"`},
		{"GET", "/dashboard/verify", 200, "text/html; charset=utf-8", `<p id="verify-status">`},
		{"GET", "/dashboard/login", 200, "text/html; charset=utf-8", `<form id="login-form"`},
		{"GET", "/dashboard/forgot", 200, "text/html; charset=utf-8", `<form id="forgot-form"`},
		{"GET", "/dashboard/reset", 200, "text/html; charset=utf-8", `<form id="reset-form"`},
		{"HEAD", "/dashboard/login", 200, "text/html; charset=utf-8", ""},
		{"GET", "/dashboard/assets/app.css", 200, "text/css; charset=utf-8", "font-family: system-ui"},
		{"GET", "/dashboard/assets/js/api.js", 200, "text/javascript; charset=utf-8", "X-CSRF-Token"},
		{"GET", "/dashboard/nope", 404, "text/plain; charset=utf-8", "404 page not found"},
		{"GET", "/dashboard/assets/", 404, "text/plain; charset=utf-8", "404 page not found"},
		{"GET", "/dashboard/assets/missing.js", 404, "text/plain; charset=utf-8", "404 page not found"},
		{"GET", "/dashboard/layout.html", 404, "text/plain; charset=utf-8", "404 page not found"},
		{"POST", "/dashboard/login", 405, "text/plain; charset=utf-8", "method not allowed"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			resp, body := get(t, c.method, srv.URL+c.path)
			if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != c.contentType {
				t.Fatalf("status %d, Content-Type %q; want %d, %q", resp.StatusCode, resp.Header.Get("Content-Type"), c.status, c.contentType)
			}
			if !strings.Contains(body, c.contains) {
				t.Fatalf("body lacks %q:\n%.600s", c.contains, body)
			}
			want := map[string]string{"Content-Security-Policy": ContentSecurityPolicy, "X-Frame-Options": "DENY",
				"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
			for k, v := range want {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if c.status == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow = %q", resp.Header.Get("Allow"))
			}
		})
	}
}

var (
	assetRef  = regexp.MustCompile(`(?:src|href)="(/dashboard/assets/[^"]+)"`)
	importRef = regexp.MustCompile(`(?m)^import [^;]*? from "(\.[^"]+)";`)
)

// Every asset a page names and every module a module imports is served, with a type the
// browser accepts for it (a module with the wrong type is refused under nosniff).
func TestEveryReferencedAssetAndImportIsServed(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	seen := map[string]bool{}
	var follow func(from, p string)
	follow = func(from, p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		resp, body := get(t, "GET", srv.URL+p)
		if resp.StatusCode != 200 {
			t.Errorf("%s names %s: %d", from, p, resp.StatusCode)
			return
		}
		ext := path.Ext(p)
		if want := mime.TypeByExtension(ext); resp.Header.Get("Content-Type") != want {
			t.Errorf("%s: Content-Type %q, want %q", p, resp.Header.Get("Content-Type"), want)
		}
		if ext == ".js" {
			for _, m := range importRef.FindAllStringSubmatch(body, -1) {
				follow(p, path.Join(path.Dir(p), m[1]))
			}
		}
	}
	for _, p := range Pages {
		_, body := get(t, "GET", srv.URL+Prefix+p.Name)
		refs := assetRef.FindAllStringSubmatch(body, -1)
		if len(refs) != 2 {
			t.Errorf("page %s names %d assets, want the stylesheet and its module", p.Name, len(refs))
		}
		for _, m := range refs {
			follow(p.Name, m[1])
		}
	}
	modules, _ := fs.Glob(webFS, "web/assets/js/*.js")
	pageModules, _ := fs.Glob(webFS, "web/assets/js/pages/*.js")
	for _, m := range append(modules, pageModules...) {
		if p := Prefix + strings.TrimPrefix(m, "web/"); !seen[p] {
			t.Errorf("%s is embedded but no page loads it", p)
		}
	}
}

// The dashboard works offline: no asset names another host (the SVG namespace is a name,
// not a fetch).
func TestAssetsLoadNothingFromAnotherHost(t *testing.T) {
	external := regexp.MustCompile(`(?:https?:)?//[a-zA-Z0-9.-]+\.[a-z]{2,}`)
	err := fs.WalkDir(webFS, "web", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, _ := fs.ReadFile(webFS, p)
		text := strings.ReplaceAll(string(raw), `"http://www.w3.org/2000/svg"`, "")
		if m := external.FindString(text); m != "" {
			t.Errorf("%s names another host: %s", p, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
