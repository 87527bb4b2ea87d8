package essetup

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
)

// ModeAPMClassic checks, instead of installing, what the classic APM path
// (configs/elasticsearch/apm-classic.yaml) needs: the APM integration's data streams and ingest
// pipelines. They belong to the integration (Fleet installs them on 8.0 - 8.14; Elasticsearch
// ships them from 8.15), whose versions must match the cluster's, so tracegate does not write its
// own.
const ModeAPMClassic = "apm-classic"

// apmClassicStreams are data stream names the classic path writes (a service's own application
// streams stand for every service's).
func apmClassicStreams() []string {
	streams := []string{
		"traces-apm-default", "logs-apm.error-default", "logs-apm.app.tracegate_check-default",
		"metrics-apm.app.tracegate_check-default", "metrics-apm.internal-default",
	}
	for _, set := range []string{"transaction", "service_transaction", "service_destination", "service_summary"} {
		for _, interval := range []string{"1m", "10m", "60m"} {
			streams = append(streams, "metrics-apm."+set+"."+interval+"-default")
		}
	}
	return streams
}

type indexTemplate struct {
	Name          string `json:"name"`
	IndexTemplate struct {
		IndexPatterns []string        `json:"index_patterns"`
		Priority      int             `json:"priority"`
		DataStream    json.RawMessage `json:"data_stream"`
	} `json:"index_template"`
}

// checkAPMClassic reports the streams no data stream template of the integration covers and
// whether its ingest pipelines are there; an error says what to install and how.
func checkAPMClassic(ctx context.Context, c *client, version string, log io.Writer) error {
	status, body, _, err := c.do(ctx, http.MethodGet, "_index_template/*apm*", nil)
	if err != nil {
		return err
	}
	var templates struct {
		IndexTemplates []indexTemplate `json:"index_templates"`
	}
	if status == http.StatusOK {
		if err := json.Unmarshal(body, &templates); err != nil {
			return fmt.Errorf("reading the index templates: %w", err)
		}
	} else if status != http.StatusNotFound {
		return fmt.Errorf("GET _index_template/*apm*: status %d: %s", status, body)
	}
	var missing []string
	for _, stream := range apmClassicStreams() {
		t, ok := bestTemplate(templates.IndexTemplates, stream)
		switch {
		case !ok:
			missing = append(missing, stream)
		case len(t.IndexTemplate.DataStream) == 0:
			missing = append(missing, stream+" (template "+t.Name+" is not for a data stream)")
		default:
			fmt.Fprintf(log, "%s: template %s\n", stream, t.Name)
		}
	}
	pipelines := 0
	status, body, _, err = c.do(ctx, http.MethodGet, "_ingest/pipeline/*apm*", nil)
	if err != nil {
		return err
	}
	if status == http.StatusOK {
		var byName map[string]json.RawMessage
		if err := json.Unmarshal(body, &byName); err == nil {
			pipelines = len(byName)
		}
	}
	fmt.Fprintf(log, "%d APM ingest pipelines\n", pipelines)
	if len(missing) == 0 && pipelines > 0 {
		fmt.Fprintln(log, "The APM integration's data streams and pipelines are in place.")
		fmt.Fprint(log, apmClassicPrivileges)
		return nil
	}
	return fmt.Errorf("the APM integration is not installed on this cluster (Elasticsearch %s): %d of %d data streams without its template%s, %d ingest pipelines\n%s",
		version, len(missing), len(apmClassicStreams()), listed(missing), pipelines, apmClassicSteps)
}

// bestTemplate is the template of the highest priority whose patterns match name, the one
// Elasticsearch applies.
func bestTemplate(templates []indexTemplate, name string) (indexTemplate, bool) {
	var best indexTemplate
	found := false
	for _, t := range templates {
		for _, p := range t.IndexTemplate.IndexPatterns {
			if ok, _ := path.Match(p, name); ok && (!found || t.IndexTemplate.Priority > best.IndexTemplate.Priority) {
				best, found = t, true
			}
		}
	}
	return best, found
}

func listed(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return " (" + strings.Join(names, ", ") + ")"
}

const apmClassicSteps = `Install the APM integration, which brings the templates, ingest pipelines and lifecycle policies:
  - Elasticsearch 8.15 and later ship them: check that xpack.apm_data.enabled is not false.
  - 8.0 - 8.14: in Kibana, Integrations > Elastic APM > Add Elastic APM (an APM Server need not run),
    or with Kibana's Fleet API:
      curl -u elastic -X POST "$KIBANA_URL/api/fleet/epm/packages/apm" -H 'kbn-xsrf: true'
    (the newest package version for the cluster is installed).
Then run this command again.
`

const apmClassicPrivileges = `tracegate's API key needs, on traces-apm*, logs-apm* and metrics-apm*: create_doc and auto_configure.
  POST /_security/api_key
  {"name": "tracegate-apm-classic", "role_descriptors": {"tracegate": {"cluster": ["monitor"],
    "indices": [{"names": ["traces-apm*", "logs-apm*", "metrics-apm*"], "privileges": ["create_doc", "auto_configure"]}]}}}
`
