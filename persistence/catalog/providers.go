package catalog

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// Providers: who runs a route's upstream when it is not the format's own API. A cloud serves
// the same wire formats under its own URLs and authentication (docs/catalog.md, "Cloud routes").
const (
	ProviderDirect  = ""        // the format's own API or a compatible one, with a static credential
	ProviderBedrock = "bedrock" // AWS Bedrock: InvokeModel (messages) or Converse, SigV4-signed
	ProviderVertex  = "vertex"  // Google Vertex AI: Gemini or Claude, OAuth2 access tokens
	ProviderAzure   = "azure"   // Azure OpenAI: deployments and an api-version, api-key or Entra ID
)

// FormatConverse is Bedrock's Converse API, spoken only by Bedrock routes.
const FormatConverse = "converse"

// Auth kinds a route can use, as /admin/v1/routes shows them.
const (
	AuthNone        = "none"         // no credential: an open endpoint
	AuthAPIKey      = "api_key"      // a static secret in a header
	AuthSigV4       = "aws_sigv4"    // AWS Signature Version 4 over the request
	AuthGoogleOAuth = "google_oauth" // OAuth2 access tokens from a service account or ADC
	AuthEntra       = "azure_entra"  // Entra ID tokens by the client-credentials grant
)

// AWS is a Bedrock route's region and credentials: named environment variables, or neither
// for the AWS SDK's default chain (environment, shared files, SSO, the instance role).
type AWS struct {
	Region          string
	AccessKeyEnv    string
	SecretKeyEnv    string
	SessionTokenEnv string
}

// Vertex is a Vertex AI route's project, location and service-account key file ("" for
// Google's application default credentials).
type Vertex struct {
	Project         string
	Location        string
	CredentialsFile string
}

// Azure is an Azure OpenAI route's deployment and api-version ("v1" selects the /openai/v1
// paths, where the body's model names the deployment), and Entra ID when it replaces the key.
type Azure struct {
	Deployment string
	APIVersion string
	Entra      *Entra
}

// AzureV1 is the api_version that selects Azure's version-less /openai/v1 paths.
const AzureV1 = "v1"

// Entra is the client-credentials grant for Azure OpenAI: tenant, client id and secret from
// the environment (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET by default).
type Entra struct {
	TenantIDEnv, ClientIDEnv, ClientSecretEnv string
	// AuthorityURL is the identity platform's base (https://login.microsoftonline.com); the
	// token endpoint is {AuthorityURL}/{tenant}/oauth2/v2.0/token.
	AuthorityURL string
	Scope        string
}

// AuthKind names how the route authenticates.
func (r *Route) AuthKind() string {
	switch {
	case r.Provider == ProviderBedrock && r.CredentialEnv == "":
		return AuthSigV4
	case r.Provider == ProviderVertex:
		return AuthGoogleOAuth
	case r.Azure != nil && r.Azure.Entra != nil:
		return AuthEntra
	case r.CredentialEnv != "":
		return AuthAPIKey
	}
	return AuthNone
}

type awsDoc struct {
	Region          string `yaml:"region"`
	AccessKeyEnv    string `yaml:"access_key_env"`
	SecretKeyEnv    string `yaml:"secret_key_env"`
	SessionTokenEnv string `yaml:"session_token_env"`
}

type vertexDoc struct {
	Project         string `yaml:"project"`
	Location        string `yaml:"location"`
	CredentialsFile string `yaml:"credentials_file"`
}

type azureDoc struct {
	Deployment string `yaml:"deployment"`
	APIVersion string `yaml:"api_version"`
	Entra      *struct {
		TenantIDEnv     string `yaml:"tenant_id_env"`
		ClientIDEnv     string `yaml:"client_id_env"`
		ClientSecretEnv string `yaml:"client_secret_env"`
		AuthorityURL    string `yaml:"authority_url"`
		Scope           string `yaml:"scope"`
	} `yaml:"entra"`
}

// formatsOf are the formats each provider serves.
var formatsOf = map[string][]string{
	ProviderDirect:  {FormatChat, FormatMessages, FormatGemini, FormatResponses},
	ProviderBedrock: {FormatMessages, FormatConverse},
	ProviderVertex:  {FormatGemini, FormatMessages},
	ProviderAzure:   {FormatChat, FormatResponses},
}

var (
	regionPattern   = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d{1,2}$`)
	projectPattern  = regexp.MustCompile(`^[a-z][a-z0-9-]{4,61}[a-z0-9]$|^[0-9]{1,20}$`)
	locationPattern = regexp.MustCompile(`^(global|[a-z]+(-[a-z]+)*\d*)$`)
	segmentPattern  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	envPattern      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// provider checks the route's provider, its settings block and its format, and fills in
// the base URL a cloud route may leave out.
func (v *validator) provider(model string, field func(string) string, d *routeDoc, r *Route) {
	formats, ok := formatsOf[r.Provider]
	if !ok {
		v.fail(model, field("provider"), fmt.Sprintf("%q must be bedrock, vertex or azure (or left out for the format's own API)", r.Provider))
		return
	}
	if !oneOf(r.Format, formats...) {
		who := "a direct route"
		if r.Provider != ProviderDirect {
			who = "provider " + r.Provider
		}
		v.fail(model, field("format"), fmt.Sprintf("%q must be %s for %s", r.Format, orList(formats), who))
	}
	blocks := map[string]bool{ProviderBedrock: d.AWS != nil, ProviderVertex: d.Vertex != nil, ProviderAzure: d.Azure != nil}
	names := map[string]string{ProviderBedrock: "aws", ProviderVertex: "vertex", ProviderAzure: "azure"}
	for p, given := range blocks {
		if given && p != r.Provider {
			v.fail(model, field(names[p]), fmt.Sprintf("is only for provider %s", p))
		}
	}
	switch r.Provider {
	case ProviderBedrock:
		v.aws(model, field, d.AWS, r)
	case ProviderVertex:
		v.vertex(model, field, d.Vertex, r)
	case ProviderAzure:
		v.azure(model, field, d.Azure, r)
	}
}

func (v *validator) aws(model string, field func(string) string, d *awsDoc, r *Route) {
	if d == nil {
		v.fail(model, field("aws"), "a bedrock route needs aws: {region: …} (and access_key_env/secret_key_env, or the AWS SDK's default credentials)")
		return
	}
	r.AWS = &AWS{Region: d.Region, AccessKeyEnv: d.AccessKeyEnv, SecretKeyEnv: d.SecretKeyEnv, SessionTokenEnv: d.SessionTokenEnv}
	if !regionPattern.MatchString(d.Region) {
		v.fail(model, field("aws.region"), fmt.Sprintf("%q must be an AWS region such as us-east-1", d.Region))
	}
	if (d.AccessKeyEnv == "") != (d.SecretKeyEnv == "") {
		v.fail(model, field("aws"), "access_key_env and secret_key_env go together (leave both out for the AWS SDK's default credentials)")
	}
	if d.SessionTokenEnv != "" && d.AccessKeyEnv == "" {
		v.fail(model, field("aws.session_token_env"), "needs access_key_env and secret_key_env")
	}
	v.envSet(model, field("aws.access_key_env"), d.AccessKeyEnv)
	v.envSet(model, field("aws.secret_key_env"), d.SecretKeyEnv)
	v.envSet(model, field("aws.session_token_env"), d.SessionTokenEnv)
	if r.BaseURL == "" {
		r.BaseURL = "https://bedrock-runtime." + d.Region + ".amazonaws.com"
	}
}

func (v *validator) vertex(model string, field func(string) string, d *vertexDoc, r *Route) {
	if d == nil {
		v.fail(model, field("vertex"), "a vertex route needs vertex: {project: …, location: …}")
		return
	}
	r.Vertex = &Vertex{Project: d.Project, Location: d.Location, CredentialsFile: d.CredentialsFile}
	if !projectPattern.MatchString(d.Project) {
		v.fail(model, field("vertex.project"), fmt.Sprintf("%q must be a Google Cloud project id or number", d.Project))
	}
	if !locationPattern.MatchString(d.Location) {
		v.fail(model, field("vertex.location"), fmt.Sprintf("%q must be a Vertex AI location such as us-central1, us-east5 or global", d.Location))
	}
	if d.CredentialsFile != "" {
		v.serviceAccountFile(model, field("vertex.credentials_file"), d.CredentialsFile)
	}
	if r.CredentialEnv != "" {
		v.fail(model, field("credential_env"), "a vertex route authenticates with OAuth2 (vertex.credentials_file or application default credentials), not a static key")
	}
	if r.BaseURL == "" {
		r.BaseURL = "https://" + d.Location + "-aiplatform.googleapis.com"
		if d.Location == "global" {
			r.BaseURL = "https://aiplatform.googleapis.com"
		}
	}
}

// serviceAccountFile checks, at load, that the key file can be read and is one Google's
// libraries take, so a typo fails the reload instead of every call.
func (v *validator) serviceAccountFile(model, field, path string) {
	data, err := readSmallFile(path, 1<<20)
	if err != nil {
		v.fail(model, field, fmt.Sprintf("cannot be read: %v", err))
		return
	}
	var f struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(data, &f) != nil || f.Type == "" {
		v.fail(model, field, fmt.Sprintf("%s is not a Google credentials JSON file (no \"type\")", path))
	}
}

// readSmallFile reads a regular file of at most max bytes (never a device or a pipe that
// would block the load).
func readSmallFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > max {
		return nil, fmt.Errorf("%s is not a regular file of at most %d bytes", path, max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}

func (v *validator) azure(model string, field func(string) string, d *azureDoc, r *Route) {
	if d == nil {
		v.fail(model, field("azure"), "an azure route needs azure: {deployment: …, api_version: …}")
		return
	}
	r.Azure = &Azure{Deployment: d.Deployment, APIVersion: d.APIVersion}
	if d.APIVersion == "" {
		v.fail(model, field("azure.api_version"), `is required (such as "2024-10-21", or "v1" for the /openai/v1 paths)`)
	} else if !segmentPattern.MatchString(d.APIVersion) {
		v.fail(model, field("azure.api_version"), fmt.Sprintf("%q is not an api-version", d.APIVersion))
	}
	needsDeployment := d.APIVersion != AzureV1 && r.Format == FormatChat
	switch {
	case d.Deployment == "" && needsDeployment:
		v.fail(model, field("azure.deployment"), "is required: the deployment's name in the Azure portal")
	case d.Deployment != "" && !segmentPattern.MatchString(d.Deployment):
		v.fail(model, field("azure.deployment"), fmt.Sprintf("%q must be a deployment name (letters, digits, ._-)", d.Deployment))
	}
	if r.BaseURL == "" {
		v.fail(model, field("base_url"), "is required for an azure route: https://RESOURCE.openai.azure.com")
	}
	if e := d.Entra; e != nil {
		r.Azure.Entra = &Entra{
			TenantIDEnv: cmp.Or(e.TenantIDEnv, "AZURE_TENANT_ID"), ClientIDEnv: cmp.Or(e.ClientIDEnv, "AZURE_CLIENT_ID"),
			ClientSecretEnv: cmp.Or(e.ClientSecretEnv, "AZURE_CLIENT_SECRET"),
			AuthorityURL:    strings.TrimRight(cmp.Or(e.AuthorityURL, "https://login.microsoftonline.com"), "/"),
			Scope:           cmp.Or(e.Scope, "https://cognitiveservices.azure.com/.default"),
		}
		v.envSet(model, field("azure.entra.tenant_id_env"), r.Azure.Entra.TenantIDEnv)
		v.envSet(model, field("azure.entra.client_id_env"), r.Azure.Entra.ClientIDEnv)
		v.envSet(model, field("azure.entra.client_secret_env"), r.Azure.Entra.ClientSecretEnv)
		if !strings.HasPrefix(r.Azure.Entra.AuthorityURL, "https://") && !strings.HasPrefix(r.Azure.Entra.AuthorityURL, "http://") {
			v.fail(model, field("azure.entra.authority_url"), fmt.Sprintf("%q must be an http:// or https:// URL", e.AuthorityURL))
		}
		if r.CredentialEnv != "" {
			v.fail(model, field("azure.entra"), "takes the place of credential_env (the api-key): give one of them")
		}
	} else if r.CredentialEnv == "" {
		v.fail(model, field("credential_env"), "an azure route needs its api-key's variable here, or azure.entra for Entra ID")
	}
}

// envSet checks a setting that names an environment variable: a name, and set.
func (v *validator) envSet(model, field, name string) {
	switch {
	case name == "":
	case !envPattern.MatchString(name):
		v.fail(model, field, "must name an environment variable, never hold the secret itself")
	case lookupEnv(name) == "":
		v.fail(model, field, fmt.Sprintf("environment variable %s is not set", name))
	}
}

// reservedHeaders are set by the gateway itself (framing, auth, signing): a route's static
// headers may not replace them.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true,
	"Connection": true, "Te": true, "Upgrade": true, "Authorization": true, "X-Api-Key": true,
	"X-Goog-Api-Key": true, "Api-Key": true, "X-Amz-Date": true, "X-Amz-Security-Token": true,
	"X-Amz-Content-Sha256": true, "X-Request-Id": true, "Accept-Encoding": true,
}

// extras checks a route's static headers, query parameters and credential header override.
func (v *validator) extras(model string, field func(string) string, d *routeDoc, r *Route) {
	if len(d.Headers) > 0 {
		r.Headers = http.Header{}
		for _, k := range slices.Sorted(maps.Keys(d.Headers)) {
			val := d.Headers[k]
			ck := http.CanonicalHeaderKey(k)
			switch {
			case !httpguts.ValidHeaderFieldName(k):
				v.fail(model, field("headers"), fmt.Sprintf("%q is not a header name", k))
			case !httpguts.ValidHeaderFieldValue(val):
				v.fail(model, field("headers."+k), "is not a valid header value")
			case reservedHeaders[ck]:
				v.fail(model, field("headers."+k), "is set by the gateway (framing or the route's credential); use credential_env and auth_header for credentials")
			default:
				r.Headers.Set(ck, val)
			}
		}
	}
	if len(d.Query) > 0 {
		r.Query = map[string]string{}
		for _, k := range slices.Sorted(maps.Keys(d.Query)) {
			switch {
			case k == "" || strings.ContainsAny(k, "&=#? "):
				v.fail(model, field("query"), fmt.Sprintf("%q is not a query parameter name", k))
			case r.Provider == ProviderAzure && k == "api-version":
				v.fail(model, field("query.api-version"), "is azure.api_version's to set")
			default:
				r.Query[k] = d.Query[k]
			}
		}
		if r.Provider == ProviderBedrock {
			v.fail(model, field("query"), "Bedrock takes no query parameters")
		}
	}
	r.AuthHeader, r.AuthPrefix = d.AuthHeader, d.AuthPrefix
	if d.AuthHeader != "" {
		switch {
		case !httpguts.ValidHeaderFieldName(d.AuthHeader):
			v.fail(model, field("auth_header"), fmt.Sprintf("%q is not a header name", d.AuthHeader))
		case r.CredentialEnv == "":
			v.fail(model, field("auth_header"), "names the header of credential_env's secret: give credential_env too")
		}
	}
	if d.AuthPrefix != "" && d.AuthHeader == "" {
		v.fail(model, field("auth_prefix"), "goes with auth_header")
	}
	if !httpguts.ValidHeaderFieldValue(d.AuthPrefix) {
		v.fail(model, field("auth_prefix"), "is not a valid header value")
	}
}

// orList writes "a, b or c".
func orList(xs []string) string {
	if len(xs) == 1 {
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}
