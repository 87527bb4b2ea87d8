// /config/v1/agents: agents' central configuration. tracegate has no configuration source, so it
// answers as APM Server does when agent configuration is disabled: agents then keep their local
// settings and log at most a debug line (a 503 would make them log an error at every poll).

package elasticapmreceiver

import "net/http"

// agentConfigDisabled is APM Server's message for that case (8.x, Kibana disabled).
const agentConfigDisabled = "forbidden request: Agent remote configuration is disabled. " +
	"tracegate has no agent configuration source; agents keep their local configuration. " +
	"If you are not using remote configuration, you can safely ignore this error."

func handleAgentConfig(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodGet && req.Method != http.MethodPost {
		writeError(w, req, http.StatusMethodNotAllowed, "method not supported")
		return
	}
	// Agents poll again after max-age (APM Server's 300 s for errors).
	w.Header().Set("Cache-Control", "max-age=300, must-revalidate")
	writeError(w, req, http.StatusForbidden, agentConfigDisabled)
}
