package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

const adminUsage = `modelgate admin: operator commands, sent to a running gateway's admin API.

  modelgate admin accounts create --email E [--plan P]
  modelgate admin accounts list [--email E] [--limit N] [--cursor C]   oldest first; --email finds one
  modelgate admin accounts get ID
  modelgate admin accounts plan ID --plan P
  modelgate admin accounts credits ID --amount 25.00 --key IDEMPOTENCY_KEY
  modelgate admin accounts quota ID
  modelgate admin accounts disable ID    its keys and sessions stop at once
  modelgate admin accounts enable ID
  modelgate admin keys create --account ID --name N [--models a,b] [--zdr] [--import SECRET]
  modelgate admin keys list --account ID
  modelgate admin keys revoke KEY_ID
  modelgate admin usage --account ID [--from T] [--to T] [--key KEY_ID] [--model M]
                        [--limit N] [--cursor C | --all]   (T: RFC 3339 or unix seconds)
        one page of the request log with the totals of the whole selection; --cursor takes
        the page's next_cursor, --all reads every page and prints them as one
  modelgate admin routes      every route's health: cooldown, its reason, the provider's last refusal
  modelgate admin payments    credit purchases, reversals and plan events through Stripe, newest first

Flags may come before or after the words. Every command calls the gateway's admin
listener (server.admin_addr) at --admin-url (or --url), else MODELGATE_ADMIN_URL, else
MODELGATE_URL, else the admin address MODELGATE_ADMIN_ADDR that serve reads, else
http://127.0.0.1:9465; it takes --token (else
MODELGATE_ADMIN_TOKEN, else read from <--data>/admin-token, default ./data).
`

// flagsOnly are the resources that take no action word.
var flagsOnly = map[string]bool{"usage": true, "routes": true, "payments": true}

// adminCommands are the commands, each with the id it takes after its words ("" for none).
var adminCommands = map[string]string{
	"accounts create": "", "accounts list": "", "accounts get": "an account id", "accounts plan": "an account id",
	"accounts credits": "an account id", "accounts quota": "an account id",
	"accounts disable": "an account id", "accounts enable": "an account id",
	"keys create": "", "keys list": "", "keys revoke": "a key id", "usage": "", "routes": "", "payments": "",
}

// adminClient talks to /admin/v1 with the admin token.
type adminClient struct {
	url, token string
	out        io.Writer
}

func adminCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("admin", flag.ContinueOnError)
	baseURL := fs.String("admin-url", "", "the gateway's admin URL (default: MODELGATE_ADMIN_URL, else MODELGATE_URL, else http://MODELGATE_ADMIN_ADDR, else http://127.0.0.1:9465)")
	fs.StringVar(baseURL, "url", "", "the same as --admin-url (its name before the admin API had a listener of its own)")
	token := fs.String("token", os.Getenv("MODELGATE_ADMIN_TOKEN"), "admin token")
	data := fs.String("data", env("MODELGATE_DATA", "./data"), "data directory holding admin-token")
	email := fs.String("email", "", "account e-mail")
	plan := fs.String("plan", "", "plan name")
	account := fs.String("account", "", "account id")
	name := fs.String("name", "", "key name")
	models := fs.String("models", "", "comma-separated models the key may call (empty: all)")
	zdr := fs.Bool("zdr", false, "zero-data-retention key")
	imp := fs.String("import", "", "existing sk-user-/sk-token- secret to import")
	from := fs.String("from", "", "usage from")
	to := fs.String("to", "", "usage to")
	amount := fs.String("amount", "", "credits to add, USD as a decimal string")
	idem := fs.String("key", "", "credits: the top-up's idempotency key (the same key twice adds once); usage: a key id to select")
	usageModel := fs.String("model", "", "usage: a model to select")
	limit := fs.String("limit", "", "accounts list: accounts per page (1 to 1000, default 100); usage: entries per page (1 to 1000)")
	cursor := fs.String("cursor", "", "the next_cursor of the page before")
	all := fs.Bool("all", false, "usage: read every page")
	words, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(words) == 0 || len(words) < 2 && !flagsOnly[words[0]] {
		fmt.Fprint(out, adminUsage)
		if len(words) == 1 && words[0] == "help" {
			return nil
		}
		return errors.New("admin needs a resource and an action")
	}
	resource, action, rest := words[0], "", words[1:]
	if flagsOnly[resource] { // no action word
		if len(rest) > 0 {
			return fmt.Errorf("%s takes flags only", resource)
		}
	} else {
		action, rest = words[1], words[2:]
	}
	command := strings.TrimSpace(resource + " " + action)
	idKind, known := adminCommands[command]
	var positional string
	switch {
	case !known:
		fmt.Fprint(out, adminUsage)
		return fmt.Errorf("unknown admin command %q", command)
	case len(rest) > 0 && idKind == "":
		return fmt.Errorf("%s takes no argument %q (flags: modelgate admin help)", command, rest[0])
	case len(rest) > 1:
		return fmt.Errorf("%s takes one id, not %q", command, strings.Join(rest, " "))
	case len(rest) == 1:
		positional = rest[0]
	case idKind != "":
		return fmt.Errorf("%s needs %s", command, idKind)
	}
	gateway, err := adminURL(*baseURL)
	if err != nil {
		return err
	}
	if *token == "" {
		b, err := os.ReadFile(filepath.Join(*data, "admin-token"))
		if err != nil {
			return errors.New("no admin token: pass --token, set MODELGATE_ADMIN_TOKEN, or point --data at the gateway's data directory")
		}
		*token = strings.TrimSpace(string(b))
	}
	c := adminClient{url: gateway, token: *token, out: out}
	need := func(v, what string) error {
		if v == "" {
			return fmt.Errorf("%s needs %s", command, what)
		}
		return nil
	}
	switch command {
	case "accounts create":
		if err := need(*email, "--email"); err != nil {
			return err
		}
		return c.do(http.MethodPost, "/admin/v1/accounts", map[string]string{"email": *email, "plan": *plan})
	case "accounts list":
		q := url.Values{}
		for k, v := range map[string]string{"email": *email, "limit": *limit, "cursor": *cursor} {
			if v != "" {
				q.Set(k, v)
			}
		}
		path := "/admin/v1/accounts"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		return c.do(http.MethodGet, path, nil)
	case "accounts get":
		return c.do(http.MethodGet, "/admin/v1/accounts/"+positional, nil)
	case "accounts plan":
		if err := need(*plan, "--plan"); err != nil {
			return err
		}
		return c.do(http.MethodPut, "/admin/v1/accounts/"+positional+"/plan", map[string]string{"plan": *plan})
	case "accounts credits":
		if err := need(*amount, "--amount"); err != nil {
			return err
		}
		if err := need(*idem, "--key"); err != nil {
			return err
		}
		return c.do(http.MethodPost, "/admin/v1/accounts/"+positional+"/credits", map[string]string{"amount_usd": *amount, "idempotency_key": *idem})
	case "accounts quota":
		return c.do(http.MethodGet, "/admin/v1/accounts/"+positional+"/quota", nil)
	case "accounts disable", "accounts enable":
		return c.do(http.MethodPost, "/admin/v1/accounts/"+positional+"/"+strings.TrimPrefix(command, "accounts "), nil)
	case "keys create":
		if err := need(*account, "--account"); err != nil {
			return err
		}
		body := map[string]any{"name": *name, "zdr": *zdr, "models": splitList(*models)}
		if *imp != "" {
			body["import_key"] = *imp
		}
		return c.do(http.MethodPost, "/admin/v1/accounts/"+*account+"/keys", body)
	case "keys list":
		if err := need(*account, "--account"); err != nil {
			return err
		}
		return c.do(http.MethodGet, "/admin/v1/accounts/"+*account+"/keys", nil)
	case "keys revoke":
		return c.do(http.MethodDelete, "/admin/v1/keys/"+positional, nil)
	case "usage":
		if err := need(*account, "--account"); err != nil {
			return err
		}
		q := url.Values{}
		for k, v := range map[string]string{"from": *from, "to": *to, "key": *idem, "model": *usageModel, "limit": *limit, "cursor": *cursor} {
			if v != "" {
				q.Set(k, v)
			}
		}
		path := "/admin/v1/accounts/" + *account + "/usage?" + q.Encode()
		if *all {
			return c.usageAll(path)
		}
		return c.do(http.MethodGet, path, nil)
	case "routes":
		return c.do(http.MethodGet, "/admin/v1/routes", nil)
	case "payments":
		return c.do(http.MethodGet, "/admin/v1/payments", nil)
	}
	return fmt.Errorf("admin command %q has no request", command) // adminCommands and this switch disagree
}

// parseInterspersed parses flags wherever they stand among the words (Go's flag package
// stops at the first word) and returns the words in order. Everything after "--" is words.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(words, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		words, args = append(words, rest[0]), rest[1:]
	}
	return words, nil
}

// adminURL is where the admin commands go, the gateway's admin listener: --admin-url (or
// its older name --url), else MODELGATE_ADMIN_URL, else MODELGATE_URL (the variable the
// commands read before the admin API had a listener of its own: an operator's scripts keep
// working once it names the admin listener), else the admin address serve listens on
// (MODELGATE_ADMIN_ADDR, which serve and demo read, so one exported variable serves both),
// else serve's default. MODELGATE_ADDR, the public address, is never turned into an admin
// URL; a URL that turns out to be a public port is answered admin_elsewhere, which the
// commands report as such.
func adminURL(flagURL string) (string, error) {
	if u := cmp.Or(flagURL, os.Getenv("MODELGATE_ADMIN_URL"), os.Getenv("MODELGATE_URL")); u != "" {
		return strings.TrimRight(u, "/"), nil
	}
	addr := os.Getenv("MODELGATE_ADMIN_ADDR")
	switch {
	case addr == catalog.AdminOff:
		return "", errors.New("MODELGATE_ADMIN_ADDR is off: the gateway serves no admin API; pass --admin-url if another one does")
	case addr == "":
		addr = catalog.DefaultAdminAddr
	}
	return listenURL("MODELGATE_ADMIN_ADDR", addr)
}

// listenURL is the http URL that reaches a listen address named by the environment variable
// name: a wildcard host (0.0.0.0, empty) is called at 127.0.0.1, :: at ::1.
func listenURL(name, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return "", fmt.Errorf("%s %q is not a listen address like %s; pass --admin-url", name, addr, catalog.DefaultAdminAddr)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

func (c adminClient) do(method, path string, body any) error {
	raw, err := c.call(method, path, body)
	if err != nil {
		return err
	}
	_, err = c.out.Write(raw)
	return err
}

// usageAll follows next_cursor from path to the last page and prints every page's entries as
// one list, with the totals (every page carries those of the whole selection).
func (c adminClient) usageAll(path string) error {
	var all struct {
		Object string            `json:"object"`
		Data   []json.RawMessage `json:"data"`
		Totals json.RawMessage   `json:"totals"`
		Cost   string            `json:"total_cost_usd"`
		List   string            `json:"total_list_cost_usd"`
	}
	all.Data = []json.RawMessage{}
	for next := path; ; {
		raw, err := c.call(http.MethodGet, next, nil)
		if err != nil {
			return err
		}
		var page struct {
			Data       []json.RawMessage `json:"data"`
			Totals     json.RawMessage   `json:"totals"`
			Cost       string            `json:"total_cost_usd"`
			List       string            `json:"total_list_cost_usd"`
			NextCursor *string           `json:"next_cursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return fmt.Errorf("usage page: %w", err)
		}
		all.Object, all.Totals, all.Cost, all.List = "list", page.Totals, page.Cost, page.List
		all.Data = append(all.Data, page.Data...)
		if page.NextCursor == nil {
			break
		}
		u, _ := url.Parse(next)
		q := u.Query()
		q.Set("cursor", *page.NextCursor)
		u.RawQuery = q.Encode()
		next = u.String()
	}
	out, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	_, err = c.out.Write(append(out, '\n'))
	return err
}

// call sends one admin request and returns the answer, indented; a status of 300 or more is
// an error carrying the answer.
func (c adminClient) call(method, path string, body any) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var pretty bytes.Buffer
	// The server ends its JSON with a newline; Indent would keep it and add a blank line.
	if json.Indent(&pretty, bytes.TrimSpace(raw), "", "  ") == nil {
		raw = append(pretty.Bytes(), '\n')
	}
	if resp.StatusCode >= 300 {
		if publicPort(raw) {
			return nil, fmt.Errorf("%s is the gateway's public port, which serves no admin API: give its admin listener's URL (server.admin_addr) instead", c.url)
		}
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, strings.TrimSpace(string(raw)))
	}
	return raw, nil
}

// publicPort reports an answer of a gateway's public port to an admin path (404
// admin_elsewhere): the URL given is not the admin listener's.
func publicPort(raw []byte) bool {
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	return json.Unmarshal(raw, &e) == nil && e.Error.Code == "admin_elsewhere"
}

func splitList(s string) []string {
	out := []string{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
