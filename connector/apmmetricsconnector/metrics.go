package apmmetricsconnector

import (
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The metrics and their attributes are EDOT's elasticapm connector's (config.go of
// elasticapmconnector v0.36.0, signaltometricsConfig): the same names, descriptions, units and
// types, so that the store merges them, and the exporter writes them, alike.

// metricKind is how a metric's data points are summed.
type metricKind int

const (
	kindIntSum metricKind = iota
	kindDoubleSum
	kindHistogram            // explicit buckets; the exporter keeps sum and count (aggregate_metric_double)
	kindExponentialHistogram // the latency distribution
)

// metricID indexes metricDefs.
type metricID int

const (
	serviceSummary metricID = iota
	serviceTransactionHistogram
	serviceTransactionSummary
	transactionHistogram
	transactionSummary
	destinationResponseTimeSum
	destinationResponseTimeCount
	successCount
	numMetrics
)

// resourceSet says which resource attributes a metric keeps.
type resourceSet int

const (
	commonResource      resourceSet = iota // service, environment, language, agent
	transactionResource                    // those and the service instance, host, container, cloud, FaaS facts
)

type metricDef struct {
	name, description, unit string
	kind                    metricKind
	resource                resourceSet
	// bounds are an explicit histogram's bucket bounds.
	bounds []float64
}

const (
	serviceTransactionHistogramDesc = "APM service transaction aggregated metrics as histogram"
	serviceTransactionSummaryDesc   = "APM service transaction aggregated metrics as summary"
	destinationDesc                 = "APM span destination metrics"
)

var metricDefs = [numMetrics]metricDef{
	serviceSummary:               {name: "service_summary", kind: kindIntSum},
	serviceTransactionHistogram:  {name: "transaction.duration.histogram", description: serviceTransactionHistogramDesc, unit: "us", kind: kindExponentialHistogram},
	serviceTransactionSummary:    {name: "transaction.duration.summary", description: serviceTransactionSummaryDesc, unit: "us", kind: kindHistogram, bounds: []float64{1}},
	transactionHistogram:         {name: "transaction.duration.histogram", description: "APM transaction aggregated metrics as histogram", unit: "us", kind: kindExponentialHistogram, resource: transactionResource},
	transactionSummary:           {name: "transaction.duration.summary", description: "APM transaction aggregated metrics as summary", unit: "us", kind: kindHistogram, bounds: []float64{1}, resource: transactionResource},
	destinationResponseTimeSum:   {name: "span.destination.service.response_time.sum.us", description: destinationDesc, unit: "us", kind: kindDoubleSum},
	destinationResponseTimeCount: {name: "span.destination.service.response_time.count", description: destinationDesc, kind: kindIntSum},
	// The exporter keeps its sum and count only. The bounds are always [1]: EDOT's data point
	// takes [1] or [0] from the first transaction of a request, and its store resets a data point
	// whose bounds differ from the next request's (lsminterval's Adder.Histograms), so that its
	// success count restarts with every request whose first outcome differs.
	successCount: {name: "event.success_count", description: "Success count as a metric for service transaction", unit: "us", kind: kindHistogram, bounds: []float64{1}},
}

// attrSource is where an attribute's value comes from.
type attrSource int

const (
	fromSpan        attrSource = iota // the item's attribute of that key
	transactionRoot                   // the span has no parent (EDOT's connector sets it on its copy of the span)
	spanName                          // the span's name (likewise)
)

// attrSpec is one attribute of a metric's data points: taken from the item, else the default;
// a required attribute the item lacks means the item is not counted in that metric.
type attrSpec struct {
	key      string
	source   attrSource
	required bool
	hasDef   bool
	def      pcommon.Value // the default, when hasDef
	slot     int           // a span attribute's index among the distinct keys (spanFacts memoizes them)
}

func required(key string) attrSpec { return attrSpec{key: key, required: true} }

func optional(key string) attrSpec { return attrSpec{key: key} }

func withDefault(key string, v any) attrSpec {
	val := pcommon.NewValueEmpty()
	if err := val.FromRaw(v); err != nil {
		panic(err)
	}
	return attrSpec{key: key, hasDef: true, def: val}
}

func optionals(keys []string) []attrSpec {
	out := make([]attrSpec, 0, len(keys))
	for _, k := range keys {
		out = append(out, optional(k))
	}
	return out
}

// attrSpecs holds the data point attributes of each metric, built from the configuration.
type attrSpecs [numMetrics][]attrSpec

func newAttrSpecs(customSpan []string) attrSpecs {
	custom := optionals(customSpan)
	cat := func(parts ...[]attrSpec) []attrSpec {
		var out []attrSpec
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	root := attrSpec{key: "transaction.root", source: transactionRoot, required: true}
	serviceTransaction := cat([]attrSpec{root, required("transaction.type"), withDefault("metricset.name", "service_transaction")}, custom)
	transaction := cat([]attrSpec{
		root, required("transaction.name"), required("transaction.type"), optional("transaction.result"),
		required("event.outcome"), withDefault("metricset.name", "transaction"),
	}, custom)
	destination := cat([]attrSpec{
		{key: "span.name", source: spanName, required: true},
		required("event.outcome"),
		required("service.target.type"), required("service.target.name"),
		required("span.destination.service.resource"), withDefault("metricset.name", "service_destination"),
	}, custom)
	histogramHint := []attrSpec{withDefault("elasticsearch.mapping.hints", []any{"_doc_count"})}
	summaryHint := []attrSpec{withDefault("elasticsearch.mapping.hints", []any{"aggregate_metric_double"})}
	var s attrSpecs
	s[serviceSummary] = []attrSpec{withDefault("metricset.name", "service_summary")}
	s[serviceTransactionHistogram] = cat(serviceTransaction, histogramHint)
	s[serviceTransactionSummary] = cat(serviceTransaction, summaryHint)
	s[successCount] = cat(serviceTransaction, summaryHint)
	s[transactionHistogram] = cat(transaction, histogramHint)
	s[transactionSummary] = cat(transaction, summaryHint)
	s[destinationResponseTimeSum] = destination
	s[destinationResponseTimeCount] = destination
	return s
}

// assignSlots numbers the distinct span attribute keys of specs (each spec's slot), so that a
// span's value for a key is looked up once however many metrics read it; it returns how many
// there are and the slot of each key.
func (s *attrSpecs) assignSlots() map[string]int {
	slots := map[string]int{}
	for m := range s {
		specs := slices.Clone(s[m]) // the groups above share backing arrays
		for i := range specs {
			if specs[i].source != fromSpan {
				continue
			}
			slot, ok := slots[specs[i].key]
			if !ok {
				slot = len(slots)
				slots[specs[i].key] = slot
			}
			specs[i].slot = slot
		}
		s[m] = specs
	}
	return slots
}

// resourceSpecs are the resource attributes each resource set keeps (agent.name defaults to
// "unknown": EDOT's processor sets it on spans, nothing sets it on logs and metrics).
func resourceSpecs(custom []string) [2][]attrSpec {
	common := append([]attrSpec{
		optional("service.name"), optional("deployment.environment"), optional("telemetry.sdk.language"),
		withDefault("agent.name", "unknown"),
	}, optionals(custom)...)
	transaction := append(optionals([]string{
		"container.id", "k8s.pod.name", "service.version", "service.instance.id", "process.runtime.name",
		"process.runtime.version", "telemetry.sdk.version", "host.name", "os.type", "faas.instance", "faas.name",
		"faas.version", "cloud.provider", "cloud.region", "cloud.availability_zone", "cloud.platform", "cloud.account.id",
	}), common...)
	return [2][]attrSpec{commonResource: common, transactionResource: transaction}
}
