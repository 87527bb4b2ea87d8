#!/usr/bin/env bash
# Fails when a collector module in the module graph of a generated distribution is not at the one
# release tracegate is built on: core v0.148.0 / v1.54.0, contrib v0.148.0. Components from other
# release lines (EDOT) may name other releases in their go.mod files; builder-config.yaml pins
# them, and this check keeps a future change from moving a collector module silently.
#   scripts/check-collector-versions.sh cmd/tracegate [bench/tracegate-stock ...]
# The version checked is the one the build uses (a replace's target when there is one). -e: a
# module of the graph that the build never downloads may be unavailable; its version still counts.
set -euo pipefail
GO=${GO:-go}
status=0
for dir in "$@"; do
	mods=$(cd "$dir" && "$GO" list -m -e -f '{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}' all)
	bad=$(grep -E '^(go\.opentelemetry\.io/collector|github\.com/open-telemetry/opentelemetry-collector-contrib)[/ ]' <<<"$mods" |
		grep -v -E ' v(0\.148\.0|1\.54\.0)$' || true)
	if [ -n "$bad" ]; then
		echo "$dir: collector modules off v0.148.0 / v1.54.0 (pin them in the ocb manifest's replaces):"
		echo "$bad"
		status=1
	fi
done
exit $status
