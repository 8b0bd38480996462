package account

import (
	_ "embed"
	"net/http"
)

// openAPI describes /auth and /account/v1 (OpenAPI 3.1), written by hand beside the code;
// a test checks that it lists every route both APIs register.
//
//go:embed openapi.yaml
var openAPI []byte

// OpenAPI is the embedded description, for tests and tools.
func OpenAPI() []byte { return openAPI }

// serveOpenAPI answers GET /account/v1/openapi.yaml; it needs no login.
func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(openAPI)
}
