package essetup

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func put(t *testing.T, url, p, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url+"/"+p, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode, p)
}

// installAPMIntegration puts what the APM integration installs, as far as the check reads it:
// data stream templates (names and patterns of the 8.13 package) and an ingest pipeline.
func installAPMIntegration(t *testing.T, url, skip string) {
	t.Helper()
	for name, pattern := range map[string]string{
		"traces-apm": "traces-apm-*", "logs-apm.error": "logs-apm.error-*", "logs-apm.app": "logs-apm.app.*-*",
		"metrics-apm.app": "metrics-apm.app.*-*", "metrics-apm.internal": "metrics-apm.internal-*",
		"metrics-apm.transaction.1m": "metrics-apm.transaction.1m-*", "metrics-apm.transaction.10m": "metrics-apm.transaction.10m-*",
		"metrics-apm.transaction.60m": "metrics-apm.transaction.60m-*", "metrics-apm.service_transaction.1m": "metrics-apm.service_transaction.1m-*",
		"metrics-apm.service_transaction.10m": "metrics-apm.service_transaction.10m-*", "metrics-apm.service_transaction.60m": "metrics-apm.service_transaction.60m-*",
		"metrics-apm.service_destination.1m": "metrics-apm.service_destination.1m-*", "metrics-apm.service_destination.10m": "metrics-apm.service_destination.10m-*",
		"metrics-apm.service_destination.60m": "metrics-apm.service_destination.60m-*", "metrics-apm.service_summary.1m": "metrics-apm.service_summary.1m-*",
		"metrics-apm.service_summary.10m": "metrics-apm.service_summary.10m-*", "metrics-apm.service_summary.60m": "metrics-apm.service_summary.60m-*",
	} {
		if name == skip {
			continue
		}
		put(t, url, "_index_template/"+name, `{"index_patterns":["`+pattern+`"],"data_stream":{},"priority":200}`)
	}
	put(t, url, "_ingest/pipeline/traces-apm-8.13.1", `{"processors":[{"set":{"field":"processor.event","value":"span"}}]}`)
}

func TestAPMClassicCheck(t *testing.T) {
	tests := []struct {
		name    string
		version string
		install bool
		skip    string
		wantErr []string
		wantLog []string
	}{
		{name: "bare 8.13", version: "8.13.4", wantErr: []string{
			"the APM integration is not installed", "17 of 17 data streams",
			"traces-apm-default", "0 ingest pipelines", "api/fleet/epm/packages/apm",
		}},
		{
			name: "installed", version: "8.13.4", install: true,
			wantLog: []string{
				"traces-apm-default: template traces-apm", "metrics-apm.service_summary.60m-default: template metrics-apm.service_summary.60m",
				"1 APM ingest pipelines", "create_doc", "auto_configure",
			},
		},
		{
			name: "one template missing", version: "8.13.4", install: true, skip: "metrics-apm.service_destination.10m",
			wantErr: []string{"1 of 17 data streams without its template (metrics-apm.service_destination.10m-default)"},
		},
		{name: "too old", version: "7.17.20", wantErr: []string{"too old for the apm-classic mapping (needs 8.0 or later)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, url, _ := standin(t, tt.version)
			if tt.install {
				installAPMIntegration(t, url, tt.skip)
			}
			var log bytes.Buffer
			actions, err := Run(context.Background(), Options{URLs: []string{url}, Mode: ModeAPMClassic, Log: &log})
			assert.Empty(t, actions, "nothing is installed")
			if tt.wantErr != nil {
				require.Error(t, err)
				for _, w := range tt.wantErr {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			for _, w := range tt.wantLog {
				assert.Contains(t, log.String(), w)
			}
		})
	}
}
