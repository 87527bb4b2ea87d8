// Package essetup installs what a mapping needs in Elasticsearch — lifecycle policies, component
// templates, index templates — the way Beats' and APM Server's `setup` does: idempotently, with
// credentials from the environment, and without overwriting what it does not own or what is newer.
package essetup

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/tracegate/tracegate/internal/estemplates"
	"github.com/tracegate/tracegate/internal/esversion"
)

// Modes and the oldest Elasticsearch each supports.
var minVersion = map[string][2]int{
	"otel":  {8, 16}, // the otel-data plugin's traces-*.otel-* templates
	"ecs":   {8, 12}, // require_data_stream
	"plain": {7, 17}, // composable templates; older 7.x is end of life
	// The APM integration's data streams (Fleet, 8.0+); Kibana's APM UI reads them from 8.2.
	ModeAPMClassic: {8, 0},
}

// Options say where and what to install.
type Options struct {
	URLs     []string // tried in order; the first that answers as Elasticsearch is used
	APIKey   string   // encoded API key, or
	Username string   // basic authentication
	Password string
	Mode     string // otel, ecs, plain or apm-classic
	// Force overwrites existing resources, also those tracegate does not manage or that are newer.
	Force  bool
	Client *http.Client
	Log    io.Writer
}

// ClientWithCA returns an HTTP client that also trusts the CA certificates in the PEM file caFile
// (a cluster whose certificate its own CA signed, as Elasticsearch 8 installs by default), on top
// of the system's roots. An empty caFile gives the default client.
func ClientWithCA(caFile string) (*http.Client, error) {
	if caFile == "" {
		return http.DefaultClient, nil
	}
	pem, err := os.ReadFile(caFile) //nolint:gosec // the operator's file
	if err != nil {
		return nil, fmt.Errorf("read CA file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &http.Client{Transport: tr}, nil
}

// Action is what happened to one resource.
type Action struct {
	Kind    string // "ilm policy", "component template", "index template"
	Name    string
	Done    string // "installed", "upgraded", "kept"
	Because string
}

// resource is one file of configs/elasticsearch/<mode>.
type resource struct {
	kind, name, apiPath string
	body                []byte
	version             int
}

// kinds in install order: a template may name a policy and component templates, never the reverse.
var kinds = []struct{ prefix, kind, api string }{
	{"ilm-policy.", "ilm policy", "_ilm/policy"},
	{"component-template.", "component template", "_component_template"},
	{"index-template.", "index template", "_index_template"},
}

// modeResources lists what a mode installs, in install order.
func modeResources(mode string) ([]resource, error) {
	if _, ok := minVersion[mode]; !ok {
		return nil, fmt.Errorf("unknown mode %q: want otel, ecs, plain or apm-classic", mode)
	}
	entries, err := fs.ReadDir(estemplates.Templates, mode)
	if err != nil {
		return nil, err
	}
	var out []resource
	for _, k := range kinds {
		var names []string
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), k.prefix) {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			body, err := fs.ReadFile(estemplates.Templates, path.Join(mode, n))
			if err != nil {
				return nil, err
			}
			r := resource{kind: k.kind, name: strings.TrimSuffix(strings.TrimPrefix(n, k.prefix), ".json"), body: body}
			r.apiPath = k.api + "/" + r.name
			if r.version, _, err = ownVersion(k.kind, body); err != nil {
				return nil, fmt.Errorf("%s: %w", n, err)
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// ownVersion reads the version of a resource body and whether tracegate manages it: templates
// carry "version" and _meta.managed_by; policies _meta.tracegate_version and _meta.managed_by
// inside "policy".
func ownVersion(kind string, body []byte) (version int, managed bool, err error) {
	var doc struct {
		Version int `json:"version"`
		Meta    struct {
			ManagedBy string `json:"managed_by"`
		} `json:"_meta"`
		Policy struct {
			Meta struct {
				ManagedBy string `json:"managed_by"`
				Version   int    `json:"tracegate_version"`
			} `json:"_meta"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return 0, false, err
	}
	if kind == "ilm policy" {
		return doc.Policy.Meta.Version, doc.Policy.Meta.ManagedBy == "tracegate", nil
	}
	return doc.Version, doc.Meta.ManagedBy == "tracegate", nil
}

type client struct {
	opts Options
	base string
}

func (c *client) do(ctx context.Context, method, p string, body []byte) (int, []byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.base, "/")+"/"+p, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case c.opts.APIKey != "":
		req.Header.Set("Authorization", "ApiKey "+c.opts.APIKey)
	case c.opts.Username != "" && c.opts.Password != "":
		// Both, as the exporter's transport requires: with a password missing it sends no
		// credentials, and a setup that worked would be followed by a tracegate that gets 401s.
		req.SetBasicAuth(c.opts.Username, c.opts.Password)
	}
	resp, err := c.opts.Client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	return resp.StatusCode, b, resp.Header, err
}

// Run connects, checks the version against the mode and installs what is missing or older.
func Run(ctx context.Context, opts Options) ([]Action, error) {
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	var resources []resource
	if opts.Mode != ModeAPMClassic {
		var err error
		if resources, err = modeResources(opts.Mode); err != nil {
			return nil, err
		}
	}
	c, version, err := connect(ctx, opts)
	if err != nil {
		return nil, err
	}
	major, minor := esversion.Parse(version)
	want := minVersion[opts.Mode]
	if major < want[0] || (major == want[0] && minor < want[1]) {
		return nil, fmt.Errorf("the cluster runs Elasticsearch %s, too old for the %s mapping (needs %d.%d or later): %s",
			version, opts.Mode, want[0], want[1], suggestion(major, minor))
	}
	fmt.Fprintf(opts.Log, "Elasticsearch %s at %s, %s mapping\n", version, c.base, opts.Mode)
	if opts.Mode == ModeAPMClassic {
		return nil, checkAPMClassic(ctx, c, version, opts.Log)
	}
	if opts.Mode == "otel" {
		status, _, _, err := c.do(ctx, http.MethodGet, "_index_template/traces-otel@template", nil)
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, fmt.Errorf("the cluster (Elasticsearch %s) has no traces-otel@template (status %d): is the otel-data plugin disabled?", version, status)
		}
		// Elasticsearch ships the mapping; what it lacks is retention (traces@lifecycle never
		// deletes): a policy and traces-otel@custom, the optional template traces-otel@template
		// composes for exactly this.
		fmt.Fprintln(opts.Log, "Elasticsearch ships the otel mapping's templates; installing retention for traces-*.otel-*")
	}
	var actions []Action
	for _, r := range resources {
		if r, err = forVersion(r, major, minor); err != nil {
			return actions, fmt.Errorf("%s %s: %w", r.kind, r.name, err)
		}
		a, err := install(ctx, c, r, opts.Force)
		if err != nil {
			return actions, fmt.Errorf("%s %s: %w", r.kind, r.name, err)
		}
		fmt.Fprintf(opts.Log, "%s %s %s%s\n", a.Done, a.Kind, a.Name, because(a.Because))
		actions = append(actions, a)
	}
	return actions, nil
}

// forVersion adds to a resource what only some versions accept. From 8.14, a settings template
// lets documents past the field limit in with their extra fields unindexed
// (index.mapping.total_fields.ignore_dynamic_beyond_limit): otherwise, in ECS mode (every unknown
// attribute a top-level field), the 2001st distinct attribute key makes Elasticsearch refuse every
// document that has one, until the next rollover. Older versions refuse the setting.
func forVersion(r resource, major, minor int) (resource, error) {
	if r.kind != "component template" || !strings.HasSuffix(r.name, "@settings") || major < 8 || (major == 8 && minor < 14) {
		return r, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(r.body, &doc); err != nil {
		return r, err
	}
	mapping, ok := dig(doc, "template", "settings", "index", "mapping")
	if !ok {
		return r, nil
	}
	fields, ok := mapping["total_fields"].(map[string]any)
	if !ok {
		return r, nil
	}
	fields["ignore_dynamic_beyond_limit"] = true
	body, err := json.Marshal(doc)
	if err != nil {
		return r, err
	}
	r.body = body
	return r, nil
}

// dig returns the object at a path of keys.
func dig(doc map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := doc[k].(map[string]any)
		if !ok {
			return nil, false
		}
		doc = next
	}
	return doc, true
}

func because(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func suggestion(major, minor int) string {
	switch {
	case major > 8 || (major == 8 && minor >= 12):
		return "use --mode ecs, or upgrade to 8.16+ for otel"
	case major >= 7:
		return "use --mode plain"
	}
	return "upgrade Elasticsearch"
}

// connect finds the first URL that answers GET / as Elasticsearch, and its version.
func connect(ctx context.Context, opts Options) (*client, string, error) {
	var errs []error
	for _, u := range opts.URLs {
		c := &client{opts: opts, base: u}
		status, body, h, err := c.do(ctx, http.MethodGet, "", nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if status != http.StatusOK {
			hint := ""
			if status == http.StatusUnauthorized || status == http.StatusForbidden {
				// Reading the version needs the monitor cluster privilege, which a key made only
				// for templates and ILM lacks.
				hint = " (the credentials need the cluster privileges monitor, manage_index_templates and manage_ilm)"
			}
			errs = append(errs, fmt.Errorf("%s: GET / answered %d%s: %s", u, status, hint, bytes.TrimSpace(body)))
			continue
		}
		if h.Get("X-Elastic-Product") != "Elasticsearch" {
			errs = append(errs, fmt.Errorf("%s is not Elasticsearch (no X-Elastic-Product header)", u))
			continue
		}
		var info struct {
			Version struct {
				Number string `json:"number"`
			} `json:"version"`
		}
		if err := json.Unmarshal(body, &info); err != nil || info.Version.Number == "" {
			errs = append(errs, fmt.Errorf("%s: no version in GET /", u))
			continue
		}
		return c, info.Version.Number, nil
	}
	if len(errs) == 0 {
		return nil, "", errors.New("no Elasticsearch URL given (ELASTICSEARCH_URL)")
	}
	return nil, "", errors.Join(errs...)
}

// install puts r unless an existing resource must be kept: one tracegate does not manage, or one
// whose version is the same or newer (unless force).
func install(ctx context.Context, c *client, r resource, force bool) (Action, error) {
	a := Action{Kind: r.kind, Name: r.name, Done: "installed"}
	status, body, _, err := c.do(ctx, http.MethodGet, r.apiPath, nil)
	if err != nil {
		return a, err
	}
	switch status {
	case http.StatusNotFound:
	case http.StatusOK:
		existing, managed, err := existingVersion(r.kind, r.name, body)
		if err != nil {
			return a, err
		}
		switch {
		case force:
			a.Done, a.Because = "upgraded", "--force"
		case !managed:
			a.Done, a.Because = "kept", "not managed by tracegate; --force overwrites it"
			return a, nil
		case existing >= r.version:
			a.Done, a.Because = "kept", "version "+strconv.Itoa(existing)+" installed, this is "+strconv.Itoa(r.version)
			return a, nil
		default:
			a.Done, a.Because = "upgraded", "version "+strconv.Itoa(existing)+" → "+strconv.Itoa(r.version)
		}
	default:
		return a, fmt.Errorf("GET %s answered %d: %s", r.apiPath, status, bytes.TrimSpace(body))
	}
	status, body, _, err = c.do(ctx, http.MethodPut, r.apiPath, r.body)
	if err != nil {
		return a, err
	}
	if status != http.StatusOK {
		return a, fmt.Errorf("PUT %s answered %d: %s", r.apiPath, status, bytes.TrimSpace(body))
	}
	return a, nil
}

// existingVersion reads the version and owner of a GET response for one resource.
func existingVersion(kind, name string, body []byte) (int, bool, error) {
	var list map[string]json.RawMessage
	if err := json.Unmarshal(body, &list); err != nil {
		return 0, false, fmt.Errorf("GET response: %w", err)
	}
	switch kind {
	case "ilm policy":
		return ownVersion(kind, list[name])
	default:
		key, item := "index_templates", "index_template"
		if kind == "component template" {
			key, item = "component_templates", "component_template"
		}
		var entries []map[string]json.RawMessage
		if err := json.Unmarshal(list[key], &entries); err != nil {
			return 0, false, fmt.Errorf("GET response: %w", err)
		}
		for _, e := range entries {
			var n string
			_ = json.Unmarshal(e["name"], &n)
			if n == name {
				return ownVersion(kind, e[item])
			}
		}
		return 0, false, fmt.Errorf("GET response does not list %s", name)
	}
}
