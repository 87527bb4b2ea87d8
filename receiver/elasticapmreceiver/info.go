// GET /: APM Server's server information. Agents read the version to choose features and log an
// error when this endpoint fails.

package elasticapmreceiver

import (
	"net/http"

	"go.opentelemetry.io/collector/component"
)

// serverInfo is the GET / body. build_date stays APM Server's zero value: a collector build has
// no date of its own; build_sha names the tracegate build instead of a commit.
func serverInfo(version string, build component.BuildInfo) map[string]any {
	return map[string]any{ // encoding/json sorts the keys, as APM Server's mapstr does
		"build_date":    "0001-01-01T00:00:00Z",
		"build_sha":     build.Command + " " + build.Version,
		"publish_ready": true,
		"version":       version,
	}
}

func (r *intakeReceiver) handleRoot(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != rootPath {
		writeError(w, req, http.StatusNotFound, "404 page not found")
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		writeError(w, req, http.StatusMethodNotAllowed,
			"method not supported: this is the server information endpoint; did you mean to send data to another endpoint instead?")
		return
	}
	writeJSON(w, req, http.StatusOK, r.info)
}
