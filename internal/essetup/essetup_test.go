package essetup

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// standin runs the Elasticsearch stand-in behind a recorder of Authorization headers.
func standin(t *testing.T, version string) (*esstandin.Server, string, func() []string) {
	t.Helper()
	es, err := esstandin.New(esstandin.Options{Version: version, KeepDocuments: true})
	require.NoError(t, err)
	var mu sync.Mutex
	var auth []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		es.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return es, hs.URL, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), auth...) }
}

func summary(actions []Action) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a.Done+" "+a.Kind+" "+a.Name)
	}
	return out
}

func TestInstallECS(t *testing.T) {
	es, url, auth := standin(t, "8.13.4")
	opts := Options{URLs: []string{"http://127.0.0.1:1", url}, APIKey: "a2V5", Mode: "ecs"}
	actions, err := Run(context.Background(), opts)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"installed ilm policy tracegate-traces-ecs",
		"installed component template tracegate-traces-ecs@mappings",
		"installed component template tracegate-traces-ecs@settings",
		"installed index template tracegate-traces-ecs",
	}, summary(actions))
	for _, a := range auth() {
		assert.Equal(t, "ApiKey a2V5", a)
	}
	// The template turns traces-generic-default into a data stream: ECS documents are accepted.
	body := `{"create":{"_index":"traces-generic-default"}}` + "\n" + `{"@timestamp":"2026-11-30T00:00:00Z","span":{"id":"aa"}}` + "\n"
	resp, err := http.Post(url+"/_bulk?require_data_stream=true", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 1, es.Stats().Documents)
	// So do the data streams the exporter routes to by data_stream.* attributes (traces-<dataset>-<namespace>),
	// which Elasticsearch has no other template for before 8.16.
	body = `{"create":{"_index":"traces-payments-prod"}}` + "\n" + `{"@timestamp":"2026-11-30T00:00:00Z","span":{"id":"bb"}}` + "\n"
	resp, err = http.Post(url+"/_bulk?require_data_stream=true", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 2, es.Stats().Documents, "a routed data stream has a template")

	// Idempotent: a second run changes nothing.
	puts := countPuts(es)
	actions, err = Run(context.Background(), opts)
	require.NoError(t, err)
	for _, a := range actions {
		assert.Equal(t, "kept", a.Done, a.Name)
	}
	assert.Equal(t, puts, countPuts(es), "no PUT on the second run")
}

func countPuts(es *esstandin.Server) int {
	n := 0
	for _, r := range es.SetupRequests() {
		if r.Method == http.MethodPut {
			n++
		}
	}
	return n
}

func TestNeverOverwritesWhatItDoesNotOwnOrIsNewer(t *testing.T) {
	es, url, _ := standin(t, "8.14.0")
	put := func(path, body string) {
		req, _ := http.NewRequest(http.MethodPut, url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
	}
	put("/_index_template/tracegate-traces-ecs", `{"index_patterns":["traces-generic-*"],"data_stream":{},"version":9,"_meta":{"managed_by":"ops-team"}}`)
	put("/_component_template/tracegate-traces-ecs@settings", `{"template":{},"version":7,"_meta":{"managed_by":"tracegate"}}`)
	put("/_component_template/tracegate-traces-ecs@mappings", `{"template":{},"version":0,"_meta":{"managed_by":"tracegate"}}`)

	actions, err := Run(context.Background(), Options{URLs: []string{url}, Mode: "ecs"})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"installed ilm policy tracegate-traces-ecs",
		"upgraded component template tracegate-traces-ecs@mappings", // ours, older
		"kept component template tracegate-traces-ecs@settings",     // ours, newer
		"kept index template tracegate-traces-ecs",                  // the user's
	}, summary(actions))
	user, _ := es.SetupResource("_index_template", "tracegate-traces-ecs")
	assert.Contains(t, string(user), "ops-team")

	actions, err = Run(context.Background(), Options{URLs: []string{url}, Mode: "ecs", Force: true})
	require.NoError(t, err)
	for _, a := range actions {
		assert.Equal(t, "upgraded", a.Done, a.Name)
	}
	ours, _ := es.SetupResource("_index_template", "tracegate-traces-ecs")
	assert.Contains(t, string(ours), `"managed_by": "tracegate"`)
}

func TestVersionChecks(t *testing.T) {
	for _, tt := range []struct {
		version, mode string
		wantErr       string // "" = success
		wantInstalled int
	}{
		{"8.17.0", "otel", "", 2},
		{"8.13.4", "otel", "the cluster runs Elasticsearch 8.13.4, too old for the otel mapping (needs 8.16 or later): use --mode ecs, or upgrade to 8.16+ for otel", 0},
		{"8.11.4", "ecs", "the cluster runs Elasticsearch 8.11.4, too old for the ecs mapping (needs 8.12 or later): use --mode plain", 0},
		{"7.17.25", "plain", "", 4},
		{"8.5.3", "plain", "", 4},
		{"8.13.4", "bodymap", `unknown mode "bodymap": want otel, ecs, plain or apm-classic`, 0},
	} {
		t.Run(tt.version+"/"+tt.mode, func(t *testing.T) {
			_, url, _ := standin(t, tt.version)
			actions, err := Run(context.Background(), Options{URLs: []string{url}, Mode: tt.mode, Username: "elastic", Password: "x"})
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Len(t, actions, tt.wantInstalled)
		})
	}
}

func TestNotElasticsearch(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"version":{"number":"8.17.0"}}`))
	}))
	defer hs.Close()
	_, err := Run(context.Background(), Options{URLs: []string{hs.URL}, Mode: "ecs"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is not Elasticsearch")
}

// TestMissingPrivilege: a key without the monitor privilege cannot read the version; the error
// says which privileges the setup needs.
func TestMissingPrivilege(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"error":{"type":"security_exception","reason":"action [cluster:monitor/main] is unauthorized"},"status":403}`))
	}))
	defer hs.Close()
	_, err := Run(context.Background(), Options{URLs: []string{hs.URL}, APIKey: "a2V5", Mode: "ecs"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "answered 403 (the credentials need the cluster privileges monitor, manage_index_templates and manage_ilm)")
	assert.Contains(t, err.Error(), "cluster:monitor/main")
}

func TestEveryTemplateFileIsValid(t *testing.T) {
	for _, mode := range []string{"ecs", "plain"} {
		rs, err := modeResources(mode)
		require.NoError(t, err)
		require.Len(t, rs, 4, mode)
		for _, r := range rs {
			_, managed, err := ownVersion(r.kind, r.body)
			require.NoError(t, err)
			assert.True(t, managed, "%s %s must say managed_by tracegate", r.kind, r.name)
			assert.Positive(t, r.version, "%s %s needs a version", r.kind, r.name)
		}
	}
}

// TestClusterWithItsOwnCA: a cluster whose certificate its own CA signed (Elasticsearch 8's
// default install) is refused without that CA and reached with ClientWithCA (ELASTICSEARCH_CA_FILE).
func TestClusterWithItsOwnCA(t *testing.T) {
	es, err := esstandin.New(esstandin.Options{Version: "8.13.4"})
	require.NoError(t, err)
	hs := httptest.NewTLSServer(es.Handler())
	t.Cleanup(hs.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw}), 0o600))

	opts := Options{URLs: []string{hs.URL}, Mode: "ecs"}
	_, err = Run(context.Background(), opts)
	require.Error(t, err, "the default client must not trust the cluster's own CA")
	assert.Contains(t, err.Error(), "certificate")

	opts.Client, err = ClientWithCA(caFile)
	require.NoError(t, err)
	actions, err := Run(context.Background(), opts)
	require.NoError(t, err)
	assert.Len(t, actions, 4)

	_, err = ClientWithCA(filepath.Join(t.TempDir(), "missing.pem"))
	require.Error(t, err)
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("hello"), 0o600))
	_, err = ClientWithCA(notPEM)
	require.ErrorContains(t, err, "holds no PEM certificate")
}

// TestModesHaveTheirOwnPolicies: the ecs policy rolls a data stream over and the plain one deletes
// daily indices; sharing one name, the second mode's setup kept the first mode's policy (same
// version), and its indices then never rolled over or sat in ILM errors. Upgrading a cluster from
// plain (up to 8.11) to ecs (8.12+) installs the ecs policy next to the plain one.
func TestModesHaveTheirOwnPolicies(t *testing.T) {
	es, url, _ := standin(t, "8.12.0")
	for _, mode := range []string{"plain", "ecs"} {
		actions, err := Run(context.Background(), Options{URLs: []string{url}, Mode: mode})
		require.NoError(t, err)
		assert.Contains(t, summary(actions), "installed ilm policy tracegate-traces-"+mode)
		settings, ok := es.SetupResource("_component_template", "tracegate-traces-"+mode+"@settings")
		require.True(t, ok)
		assert.Contains(t, string(settings), `"tracegate-traces-`+mode+`"`, "the %s template names its own policy", mode)
	}
	ecs, _ := es.SetupResource("_ilm/policy", "tracegate-traces-ecs")
	plain, _ := es.SetupResource("_ilm/policy", "tracegate-traces-plain")
	assert.Contains(t, string(ecs), "rollover")
	assert.NotContains(t, string(plain), "rollover", "plain indices have no alias to roll over")
}

// TestCredentialsAsTheExporterSendsThem: an API key wins; basic authentication only with both a
// username and a password, as the exporter's transport does (with the password missing it sends
// nothing, so a setup that authenticated would hide the 401s tracegate then gets).
func TestCredentialsAsTheExporterSendsThem(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts Options
		want string
	}{
		{"api key", Options{APIKey: "a2V5", Username: "elastic", Password: "x"}, "ApiKey a2V5"},
		{"basic", Options{Username: "elastic", Password: "x"}, "Basic ZWxhc3RpYzp4"},
		{"username without password", Options{Username: "elastic"}, ""},
		{"none", Options{}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, url, auth := standin(t, "8.13.4")
			opts := tt.opts
			opts.URLs, opts.Mode = []string{url}, "ecs"
			_, err := Run(context.Background(), opts)
			require.NoError(t, err)
			require.NotEmpty(t, auth())
			for _, a := range auth() {
				assert.Equal(t, tt.want, a)
			}
		})
	}
}

// TestOtelRetention: Elasticsearch 8.16+ ships the otel mapping, but its traces@lifecycle policy
// never deletes. The setup adds a 30-day policy through traces-otel@custom, the optional template
// traces-otel@template composes for this, and leaves a traces-otel@custom of the user's alone.
func TestOtelRetention(t *testing.T) {
	es, url, _ := standin(t, "8.17.0")
	actions, err := Run(context.Background(), Options{URLs: []string{url}, Mode: "otel"})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"installed ilm policy tracegate-traces-otel",
		"installed component template traces-otel@custom",
	}, summary(actions))
	custom, ok := es.SetupResource("_component_template", "traces-otel@custom")
	require.True(t, ok)
	assert.Contains(t, string(custom), `"tracegate-traces-otel"`)
	policy, _ := es.SetupResource("_ilm/policy", "tracegate-traces-otel")
	assert.Contains(t, string(policy), `"delete"`)

	// A cluster whose own traces-otel@custom already exists keeps it.
	es2, url2, _ := standin(t, "9.1.0")
	req, _ := http.NewRequest(http.MethodPut, url2+"/_component_template/traces-otel@custom",
		strings.NewReader(`{"template":{"settings":{"index":{"lifecycle":{"name":"ops-traces"}}}}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	actions, err = Run(context.Background(), Options{URLs: []string{url2}, Mode: "otel"})
	require.NoError(t, err)
	assert.Contains(t, summary(actions), "kept component template traces-otel@custom")
	users, _ := es2.SetupResource("_component_template", "traces-otel@custom")
	assert.Contains(t, string(users), "ops-traces")
}

// TestUpgradeRenamesThePolicy: a cluster set up before the policies had a name per mode holds
// version 1 of the settings template, naming the shared "tracegate-traces" policy; running the
// setup again upgrades it to name the mode's own policy.
func TestUpgradeRenamesThePolicy(t *testing.T) {
	es, url, _ := standin(t, "8.13.4")
	req, _ := http.NewRequest(http.MethodPut, url+"/_component_template/tracegate-traces-ecs@settings",
		strings.NewReader(`{"version":1,"_meta":{"managed_by":"tracegate"},"template":{"settings":{"index":{"lifecycle":{"name":"tracegate-traces"}}}}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	actions, err := Run(context.Background(), Options{URLs: []string{url}, Mode: "ecs"})
	require.NoError(t, err)
	assert.Contains(t, summary(actions), "upgraded component template tracegate-traces-ecs@settings")
	settings, _ := es.SetupResource("_component_template", "tracegate-traces-ecs@settings")
	assert.Contains(t, string(settings), `"tracegate-traces-ecs"`)
}

// TestFieldLimitByVersion: from 8.14 the settings let documents past the field limit in (their
// extra fields unindexed) instead of refusing them; 8.12-8.13 do not know the setting.
func TestFieldLimitByVersion(t *testing.T) {
	for version, want := range map[string]bool{"8.13.4": false, "8.14.0": true, "8.15.3": true} {
		t.Run(version, func(t *testing.T) {
			es, url, _ := standin(t, version)
			_, err := Run(context.Background(), Options{URLs: []string{url}, Mode: "ecs"})
			require.NoError(t, err)
			settings, ok := es.SetupResource("_component_template", "tracegate-traces-ecs@settings")
			require.True(t, ok)
			assert.Equal(t, want, strings.Contains(string(settings), `"ignore_dynamic_beyond_limit":true`), "%s", settings)
			assert.Contains(t, string(settings), `"tracegate-traces-ecs"`, "the rest of the settings stay")
		})
	}
}
