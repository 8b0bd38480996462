package account_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/mux"
	"gopkg.in/yaml.v3"

	"github.com/modelgate/modelgate/transport/account"
	"github.com/modelgate/modelgate/transport/auth"
)

// The OpenAPI file describes exactly the routes /auth and /account/v1 register, with their
// methods: a route added without its description (or a description left after its route
// went) fails here.
func TestOpenAPIDescribesEveryAuthAndAccountRoute(t *testing.T) {
	var doc struct {
		OpenAPI string                    `yaml:"openapi"`
		Paths   map[string]map[string]any `yaml:"paths"`
	}
	if err := yaml.Unmarshal(account.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	var described []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method != "parameters" {
				described = append(described, strings.ToUpper(method)+" "+path)
			}
		}
	}
	r := mux.NewRouter()
	a := auth.New(auth.Config{})
	defer a.Close()
	a.Register(r)
	account.New(account.Deps{}).Register(r)
	var served []string
	r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err1 := route.GetPathTemplate()
		methods, err2 := route.GetMethods()
		if err1 == nil && err2 == nil {
			for _, m := range methods {
				served = append(served, m+" "+path)
			}
		}
		return nil
	})
	slices.Sort(described)
	slices.Sort(served)
	if !slices.Equal(described, served) {
		t.Errorf("described:\n%s\nserved:\n%s", strings.Join(described, "\n"), strings.Join(served, "\n"))
	}
}
