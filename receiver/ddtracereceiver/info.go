package ddtracereceiver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"strconv"
)

// tracesEndpoints are advertised in /info; Java picks its endpoint from this list.
var infoEndpoints = []string{
	"/v0.3/traces", "/v0.4/traces", "/v0.5/traces", "/v0.7/traces",
	"/v0.3/services", "/v0.4/services", "/telemetry/proxy/",
}

// agentInfo is the /info body. Field order is fixed, so the body and its hash are stable.
type agentInfo struct {
	Version         string     `json:"version"`
	GitCommit       string     `json:"git_commit"`
	Endpoints       []string   `json:"endpoints"`
	FeatureFlags    []string   `json:"feature_flags"`
	ClientDropP0s   bool       `json:"client_drop_p0s"`
	SpanMetaStructs bool       `json:"span_meta_structs"`
	LongRunning     bool       `json:"long_running_spans"`
	SpanEvents      bool       `json:"span_events"`
	EVPHeaders      []string   `json:"evp_proxy_allowed_headers"`
	Config          infoConfig `json:"config"`
}

type infoConfig struct {
	DefaultEnv      string  `json:"default_env"`
	TargetTPS       float64 `json:"target_tps"` // rate_by_service's target, 0 when it is off
	MaxEPS          int     `json:"max_eps"`
	ReceiverPort    int     `json:"receiver_port"`
	ReceiverSocket  string  `json:"receiver_socket"`
	ConnectionLimit int     `json:"connection_limit"`
	ReceiverTimeout int     `json:"receiver_timeout"`
	MaxRequestBytes int64   `json:"max_request_bytes"`
	StatsdPort      int     `json:"statsd_port"`
}

// buildInfo returns the /info body and its SHA-256 in hex, the Datadog-Agent-State value.
//
// Never client_drop_p0s: with it tracers stop sending unsampled traces, and every span must reach
// Elasticsearch. No /v0.6/stats: tracegate does not compute Datadog stats, so tracers must not
// rely on them. span_events: tracegate translates native span events. span_meta_structs stays false
// until meta_struct values are decoded into attributes (they are kept as bytes).
func buildInfo(cfg *Config) ([]byte, string, error) {
	info := agentInfo{
		Version:      cfg.AgentVersion,
		GitCommit:    "tracegate",
		Endpoints:    infoEndpoints,
		FeatureFlags: []string{},
		SpanEvents:   true,
		EVPHeaders:   []string{},
		Config: infoConfig{
			DefaultEnv:      "none",
			ReceiverTimeout: int(cfg.ReadTimeout.Seconds()),
			MaxRequestBytes: cfg.MaxRequestBodySize,
			StatsdPort:      8125,
		},
	}
	if cfg.RateByService.Enabled {
		info.Config.TargetTPS = cfg.RateByService.TargetTracesPerSecond
	}
	if cfg.NetAddr.Transport == "unix" {
		info.Config.ReceiverSocket = cfg.NetAddr.Endpoint
	} else if _, port, err := net.SplitHostPort(cfg.NetAddr.Endpoint); err == nil {
		info.Config.ReceiverPort, _ = strconv.Atoi(port)
	}
	body, err := json.MarshalIndent(info, "", "\t")
	if err != nil {
		return nil, "", err
	}
	body = append(body, '\n')
	sum := sha256.Sum256(body)
	return body, hex.EncodeToString(sum[:]), nil
}
