package main

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelgate/modelgate/dashboard"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/node"
)

//go:embed demo.yaml
var demoCatalog string

// credentials is <data>/demo-credentials.json.
type credentials struct {
	APIKey     string `json:"api_key"`
	AdminToken string `json:"admin_token"`
	BaseURL    string `json:"base_url"`
	AdminURL   string `json:"admin_url"`  // the admin listener ("" when off): where admin commands go
	AccountID  string `json:"account_id"` // the demo account, which owns the key
	// The demo account's dashboard login (a random password made at the first start).
	Email     string `json:"email,omitempty"`
	Password  string `json:"password,omitempty"`
	Dashboard string `json:"dashboard_url,omitempty"`
}

const demoEmail = "demo@modelgate.local"

// demo runs the gateway with the simulator as its upstream and a ready account.
func demo(args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	data := fs.String("data", env("MODELGATE_DATA", "./data"), "data directory")
	addr := fs.String("addr", env("MODELGATE_ADDR", defaultAddr), "listen address")
	adminAddr := fs.String("admin-addr", os.Getenv("MODELGATE_ADMIN_ADDR"), "admin API listen address, or off (default 127.0.0.1:9465)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	limitMemory()
	logger := newLogger()
	sig := notifySignals()
	n, creds, stopSim, err := startDemo(*data, *addr, *adminAddr)
	if err != nil {
		return err
	}
	defer stopSim()
	logger.Info("modelgate demo serving", "base_url", creds.BaseURL, "admin", served(n.AdminURL), "metrics", served(n.MetricsURL), "credentials", filepath.Join(*data, "demo-credentials.json"))
	fmt.Printf("\nmodelgate demo is running at %s\n  API key:     %s\n  account:     %s\n  admin API:   %s\n  admin token: %s\n  metrics:     %s\n  dashboard:   %s\n    log in as  %s / %s\n  (saved in %s)\n\n",
		creds.BaseURL, creds.APIKey, creds.AccountID, served(n.AdminURL), creds.AdminToken, served(n.MetricsURL), creds.Dashboard, creds.Email, creds.Password,
		filepath.Join(*data, "demo-credentials.json"))
	return run(n, logger, sig)
}

// startDemo starts the simulator and a node over it (its admin listener at adminAddr, ""
// for the default), and makes sure the demo account and key exist. A second start with the
// same data directory reuses them.
func startDemo(dataDir, addr, adminAddr string) (*node.Node, credentials, func(), error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, credentials{}, nil, err
	}
	sim, simURL, stopSim, err := simulator.Start("127.0.0.1:0")
	if err != nil {
		return nil, credentials{}, nil, fmt.Errorf("simulator: %w", err)
	}
	for _, kv := range demoSimEnv() {
		name, value, _ := strings.Cut(kv, "=")
		if os.Getenv(name) == "" {
			os.Setenv(name, value)
		}
	}
	catPath := filepath.Join(dataDir, "demo-catalog.yaml")
	sa, err := writeDemoServiceAccount(dataDir, sim, simURL)
	if err != nil {
		stopSim()
		return nil, credentials{}, nil, err
	}
	if err := writeDemoCatalog(catPath, simURL, sa, ""); err != nil {
		stopSim()
		return nil, credentials{}, nil, err
	}
	n, err := node.Start(node.Config{DataDir: dataDir, CatalogPath: catPath, Addr: addr, AdminToken: os.Getenv("MODELGATE_ADMIN_TOKEN"),
		MetricsAddr: os.Getenv("MODELGATE_METRICS_ADDR"), AdminAddr: adminAddr,
		Store: persistence.Options{CacheBytes: mib(envInt("MODELGATE_CACHE_MIB")), MemTableBytes: mib(envInt("MODELGATE_MEMTABLE_MIB"))}})
	if err != nil {
		stopSim()
		return nil, credentials{}, nil, err
	}
	// Links in answers (image and video URLs) carry the address the demo prints, set as
	// public_url once the listener has it (a port 0 picks one).
	if err = writeDemoCatalog(catPath, simURL, sa, n.URL); err == nil {
		err = n.Reload()
	}
	// The simulator's Stripe sends its signed webhooks here, as Stripe does to an endpoint.
	if err == nil {
		err = demoStripe(sim, n.URL, os.Getenv("MODELGATE_SIM_STRIPE_WEBHOOK_SECRET"))
	}
	var creds credentials
	if err == nil {
		creds, err = demoAccount(n, dataDir)
	}
	if err != nil {
		n.Close(context.Background())
		stopSim()
		return nil, credentials{}, nil, err
	}
	return n, creds, stopSim, nil
}

// demoStripeWebhookSecret is the secret the demo's simulated Stripe signs its webhooks with.
const demoStripeWebhookSecret = "whsec_modelgate_demo"

// demoStripe points the simulator's Stripe at the gateway at base: its webhooks, the prices
// of the plans demo.yaml sells, and the plans its billing portal switches between.
func demoStripe(sim *simulator.Server, base, secret string) error {
	sim.StripeWebhook(base+billing.WebhookPath, secret)
	for id, cents := range map[string]int64{"price_demo_pro": 2000, "price_demo_team": 10000} {
		if err := sim.SetStripePrice(id, simulator.StripePrice{UnitAmount: cents, Currency: "usd"}); err != nil {
			return err
		}
	}
	return sim.SetPortalPrices("price_demo_pro", "price_demo_team")
}

// demoSimEnv are the credentials of the demo's simulated routes (the simulator takes any
// bearer or api-key, and checks SigV4 signatures against its own AWS key pair) and of its
// simulated Stripe (any sk_test_ key; the webhook secret both sides sign and check with).
func demoSimEnv() []string {
	return []string{"MODELGATE_SIM_KEY=sim-demo-credential",
		"MODELGATE_SIM_AWS_KEY=" + simulator.AWSAccessKeyID, "MODELGATE_SIM_AWS_SECRET=" + simulator.AWSSecretAccessKey,
		"MODELGATE_SIM_STRIPE_KEY=sk_test_modelgate_demo", "MODELGATE_SIM_STRIPE_WEBHOOK_SECRET=" + demoStripeWebhookSecret}
}

// writeDemoServiceAccount writes the simulator's Google service-account file into dir (its
// token_uri the simulator's token endpoint) and returns its path, for the Vertex AI routes.
func writeDemoServiceAccount(dir string, sim *simulator.Server, simURL string) (string, error) {
	path, err := filepath.Abs(filepath.Join(dir, "demo-vertex-sa.json"))
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, sim.ServiceAccountJSON(simURL+"/oauth2/token"), 0o600)
}

// writeDemoCatalog writes demo.yaml over the simulator at simURL with the service-account
// file sa, with server.public_url when publicURL is set.
func writeDemoCatalog(path, simURL, sa, publicURL string) error {
	cat := strings.ReplaceAll(strings.ReplaceAll(demoCatalog, "{{SIM}}", simURL), "{{SIM_SA}}", sa)
	if publicURL != "" {
		withURL := strings.Replace(cat, "\nserver:\n", "\nserver:\n  public_url: "+publicURL+"\n", 1)
		if withURL == cat {
			return errors.New("demo.yaml has no server: section to set public_url in")
		}
		cat = withURL
	}
	return os.WriteFile(path, []byte(cat), 0o600)
}

func demoAccount(n *node.Node, dataDir string) (credentials, error) {
	path := filepath.Join(dataDir, "demo-credentials.json")
	creds := credentials{AdminToken: n.AdminToken, BaseURL: n.URL + "/v1", AdminURL: n.AdminURL}
	var old credentials
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &old) == nil && old.APIKey != "" {
		if k, err := n.Store.LookupKey(old.APIKey); err == nil && k.RevokedAt == 0 {
			creds.APIKey, creds.AccountID = old.APIKey, k.AccountID
		}
	}
	if creds.APIKey == "" {
		acct, err := findOrCreateDemoAccount(n.Store)
		if err != nil {
			return creds, err
		}
		_, secret, err := n.Store.CreateKey(acct.ID, persistence.KeySpec{Name: "demo"})
		if err != nil {
			return creds, err
		}
		creds.APIKey, creds.AccountID = secret, acct.ID
	}
	if err := demoLogin(n.Store, &creds, old); err != nil {
		return creds, err
	}
	b, _ := json.MarshalIndent(creds, "", "  ")
	return creds, os.WriteFile(path, append(b, '\n'), 0o600)
}

func findOrCreateDemoAccount(s *persistence.Store) (persistence.Account, error) {
	a, err := s.CreateAccount(demoEmail, "demo")
	var taken *persistence.EmailTakenError
	if errors.As(err, &taken) { // made by an earlier start
		return s.GetAccount(taken.AccountID)
	}
	if err != nil {
		return a, errors.Join(errors.New("demo account"), err)
	}
	return a, nil
}

// demoLogin gives the demo account a verified dashboard login: the password of the last
// start when the account is the same and has a login, else a new random one, set as a
// password reset sets it (which verifies the e-mail).
func demoLogin(s *persistence.Store, creds *credentials, old credentials) error {
	acct, err := s.GetAccount(creds.AccountID)
	if err != nil {
		return err
	}
	creds.Email, creds.Dashboard = acct.Email, strings.TrimSuffix(creds.BaseURL, "/v1")+dashboard.Prefix
	if _, err := s.GetLogin(acct.ID); err == nil && old.Password != "" && old.AccountID == acct.ID {
		creds.Password = old.Password
		return nil
	}
	creds.Password = newDemoPassword()
	now := time.Now()
	token, err := s.IssueReset(acct.ID, now)
	if err == nil {
		_, err = s.UseToken(persistence.TokenReset, token, creds.Password, now)
	}
	if err != nil {
		return errors.Join(errors.New("demo login"), err)
	}
	return nil
}

// newDemoPassword is a random 24-character password.
func newDemoPassword() string {
	secret := make([]byte, 18)
	rand.Read(secret)
	return base64.RawURLEncoding.EncodeToString(secret)
}
