package spandoc

import (
	"regexp"
	"strings"
	"unicode"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Index is where a document goes: a data stream (type-dataset-namespace) or, when an
// elasticsearch.index attribute names one, that index alone.
type Index struct {
	Name                     string
	Type, Dataset, Namespace string
}

// IsDataStream reports whether the document names its data stream in a data_stream field.
func (i Index) IsDataStream() bool {
	return i.Type != "" && i.Dataset != "" && i.Namespace != ""
}

// Data stream types.
const (
	Traces = "traces"
	Logs   = "logs"
)

// The routing rules below are the contrib exporter's in otel mode: the record's attributes, else
// its scope's, else its resource's name the index or the dataset and namespace; without a
// dataset, the scope may name one; the dataset gets the .otel suffix.
const (
	defaultDataset     = "generic"
	defaultNamespace   = "default"
	otelSuffix         = ".otel"
	maxDataStreamBytes = 100
	forbiddenNamespace = "\\/*?\"<>| ,#:"
	forbiddenDataset   = "-\\/*?\"<>| ,#:"
	selfTelemetry      = "collectortelemetry"
	attrEncodingFormat = "encoding.format"
)

var (
	componentScope = []*regexp.Regexp{
		regexp.MustCompile(`/receiver/(\w+receiver)`),
		regexp.MustCompile(`/connector/(\w+connector)`),
	}
	selfTelemetryScopes = map[string]bool{
		"go.opentelemetry.io/collector/receiver/receiverhelper":   true,
		"go.opentelemetry.io/collector/scraper/scraperhelper":     true,
		"go.opentelemetry.io/collector/processor/processorhelper": true,
		"go.opentelemetry.io/collector/exporter/exporterhelper":   true,
		"go.opentelemetry.io/collector/service":                   true,
	}
)

// Routes reports whether a record's own attributes can change its index: when they cannot, the
// index of its scope (Route with an empty record map) serves all its records.
func Routes(record pcommon.Map) bool {
	if record.Len() == 0 {
		return false
	}
	for _, k := range [...]string{AttrIndex, attrDataset, attrNamespace} {
		if _, ok := record.Get(k); ok {
			return true
		}
	}
	return false
}

// Route is the index of a record of type typ.
func Route(typ string, record pcommon.Map, scope pcommon.InstrumentationScope, resource pcommon.Map) Index {
	maps := [3]pcommon.Map{record, scope.Attributes(), resource}
	if name, ok := lookup(AttrIndex, maps); ok {
		return Index{Name: name}
	}
	dataset, ok := lookup(attrDataset, maps)
	if !ok {
		dataset = defaultDataset
		if ds, named := scopeDataset(scope); named {
			dataset = ds
		}
	}
	namespace, ok := lookup(attrNamespace, maps)
	if !ok {
		namespace = defaultNamespace
	}
	dataset = sanitize(dataset, forbiddenDataset, otelSuffix)
	namespace = sanitize(namespace, forbiddenNamespace, "")
	return Index{Name: typ + "-" + dataset + "-" + namespace, Type: typ, Dataset: dataset, Namespace: namespace}
}

func lookup(key string, maps [3]pcommon.Map) (string, bool) {
	for _, m := range maps {
		if v, ok := m.Get(key); ok {
			return v.AsString(), true
		}
	}
	return "", false
}

// scopeDataset: the collector's own telemetry, a scope's encoding.format, or the name of the
// receiver or connector in the scope's name.
func scopeDataset(scope pcommon.InstrumentationScope) (string, bool) {
	name := scope.Name()
	if selfTelemetryScopes[name] {
		return selfTelemetry, true
	}
	if v, ok := scope.Attributes().Get(attrEncodingFormat); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
		return v.Str(), true
	}
	for _, re := range componentScope {
		if m := re.FindStringSubmatchIndex(name); len(m) == 4 {
			return name[m[2]:m[3]], true
		}
	}
	return "", false
}

// sanitize lowercases the field, replaces the characters Elasticsearch forbids with _, and cuts
// it so that with the suffix it fits in 100 bytes.
func sanitize(field, forbidden, suffix string) string {
	field = strings.Map(func(r rune) rune {
		if strings.ContainsRune(forbidden, r) {
			return '_'
		}
		return unicode.ToLower(r)
	}, field)
	if len(field) > maxDataStreamBytes-len(suffix) {
		field = field[:maxDataStreamBytes-len(suffix)]
	}
	return field + suffix
}
