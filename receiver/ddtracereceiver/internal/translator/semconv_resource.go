package translator

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// semconvSDKName is telemetry.sdk.name, as dd-trace-go's own OTLP exporter names it.
const semconvSDKName = "datadog"

// fillResourceSemconv writes a resource with the semconv mapping: the process facts the spans no
// longer carry, the payload's tags under the conventions' names.
func fillResourceSemconv(attrs pcommon.Map, g *group) {
	w := newAttrWriter(attrs, 11+len(g.tags))
	for _, kv := range g.tags {
		if kv.Value == "" {
			continue
		}
		switch r := semconvRuleOf(kv.Key); r.action {
		case tagRename:
			w.putStr(r.key, kv.Value)
		case tagKeep:
			w.putStr(kv.Key, kv.Value)
		}
	}
	w.finish()
	putProcessFacts(attrs, &g.key)
	attrs.PutStr(string(semconv.TelemetrySDKNameKey), semconvSDKName)
	putIfSet(attrs, string(semconv.TelemetrySDKLanguageKey), sdkLanguage(g.key.lang))
	putIfSet(attrs, string(semconv.TelemetrySDKVersionKey), g.key.tracerVersion)
	putIfSet(attrs, string(semconv.ProcessRuntimeVersionKey), g.key.langVersion)
}

// sdkLanguage is telemetry.sdk.language for a tracer's language name.
func sdkLanguage(lang string) string {
	switch lang {
	case "jvm":
		return "java"
	case "javascript":
		return "nodejs"
	case ".NET", "dotnet":
		return "dotnet"
	}
	return lang
}
