package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// variant is one configuration of a sweep: a collector, a delivery mode, and --set overrides.
type variant struct {
	Name      string   `yaml:"name"`
	Collector string   `yaml:"collector"`
	Mode      string   `yaml:"mode"`
	Set       []string `yaml:"set"`
	// Overlays are configuration files (from the repository root) applied on top of the mode's,
	// e.g. configs/elasticsearch/apm.yaml.
	Overlays []string `yaml:"overlays"`
	// Env is KEY=VALUE added to the measured collector's environment (GOGC, GOMEMLIMIT: the GC
	// sweep), after -collector-env.
	Env []string `yaml:"env"`
	// KeepFraction > 0 (ddtrace protocols only) is tracegen's -keep-fraction: that share of the
	// traces carry priority 2 (user keep), the rest -1 (user reject).
	KeepFraction float64 `yaml:"keep_fraction"`
	// Expect is what Elasticsearch must hold after a run with a keep fraction: "kept" (the
	// default: the kept traces' spans) or "all" (every acknowledged span, for a collector told
	// not to honour the priority).
	Expect string `yaml:"expect"`
	// Against names the variant this one is compared with, same protocol and run, in the
	// report's comparison table. Variants named alike up to a comma ("x", "x, again") are pairs
	// of one comparison, summed up by a geometric mean.
	Against string `yaml:"against"`
	// Target is where tracegen sends: "" for the protocol's own receiver, "datakit" for the
	// datakit receiver's port and its path for the protocol (loadgen.DatakitPath).
	Target string `yaml:"target"`
	// Kafka runs a tier of configs/kafka/ with Kafka in this process (kafkaAgent, kafkaGateway,
	// kafkaTiers) on the mode's configuration; its overlays are the tiers' own.
	Kafka string `yaml:"kafka"`
	// RateFraction > 0 offers this fraction of the saturation rate of the variant RateOf names:
	// the mean acknowledged spans/s of its runs (and those of its pairs, "x, again"), same
	// protocol, measured earlier in the same run.
	RateFraction float64 `yaml:"rate_fraction"`
	RateOf       string  `yaml:"rate_of"`
	// DeliveryLatency times every span from its request's acknowledgement to its arrival in the
	// stand-in.
	DeliveryLatency bool `yaml:"delivery_latency"`
	// Settle is for a collector that decides what it stores (tail sampling): nothing is expected
	// up front; the run waits this long after the load (a duration), then until no span has
	// arrived for a second, and its window ends at the last arrival.
	Settle string `yaml:"settle"`
	settle time.Duration
}

// targetDatakit is variant.Target for the datakit receiver's port.
const targetDatakit = "datakit"

// What a run with a keep fraction expects in Elasticsearch (variant.Expect).
const (
	expectKept = "kept"
	expectAll  = "all"
)

// sweepFile is the format of bench/configs/sweep.yaml.
type sweepFile struct {
	Variants []variant `yaml:"variants"`
}

func loadSweep(path string) ([]variant, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f sweepFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Variants) == 0 {
		return nil, fmt.Errorf("%s: no variants", path)
	}
	names := map[string]bool{}
	for _, v := range f.Variants {
		names[v.Name] = true
	}
	earlier := map[string]bool{}
	for i := range f.Variants {
		v := &f.Variants[i]
		if v.Name == "" {
			return nil, fmt.Errorf("%s: variant %d has no name", path, i+1)
		}
		if _, ok := modeConfigs[v.Collector][v.Mode]; !ok {
			return nil, fmt.Errorf("%s: variant %q: no configuration for collector %q in mode %q", path, v.Name, v.Collector, v.Mode)
		}
		if err := loadgen.CheckKeepFraction(loadgen.DDTraceV04, v.KeepFraction); err != nil {
			return nil, fmt.Errorf("%s: variant %q: keep_fraction: %w", path, v.Name, err)
		}
		switch {
		case v.KeepFraction == 0 && v.Expect != "":
			return nil, fmt.Errorf("%s: variant %q: expect %q needs a keep_fraction", path, v.Name, v.Expect)
		case v.KeepFraction > 0 && v.Expect == "":
			v.Expect = expectKept
		case v.Expect != "" && v.Expect != expectKept && v.Expect != expectAll:
			return nil, fmt.Errorf("%s: variant %q: expect must be %q or %q, got %q", path, v.Name, expectKept, expectAll, v.Expect)
		}
		if v.Settle != "" {
			d, err := time.ParseDuration(v.Settle)
			if err != nil || d <= 0 || v.KeepFraction > 0 {
				return nil, fmt.Errorf("%s: variant %q: settle must be a positive duration, without keep_fraction", path, v.Name)
			}
			v.settle = d
		}
		switch {
		case v.Target != "" && v.Target != targetDatakit:
			return nil, fmt.Errorf("%s: variant %q: target must be empty or %q, got %q", path, v.Name, targetDatakit, v.Target)
		case v.Target == targetDatakit && v.Collector == "stock":
			return nil, fmt.Errorf("%s: variant %q: target %q: the stock build has no datakit receiver", path, v.Name, v.Target)
		}
		if v.Against != "" && (v.Against == v.Name || !names[v.Against]) {
			return nil, fmt.Errorf("%s: variant %q: against %q names no other variant", path, v.Name, v.Against)
		}
		for _, kv := range v.Env {
			if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
				return nil, fmt.Errorf("%s: variant %q: env %q is not KEY=VALUE", path, v.Name, kv)
			}
		}
		if err := checkKafkaVariant(v); err != nil {
			return nil, fmt.Errorf("%s: variant %q: %w", path, v.Name, err)
		}
		switch {
		case (v.RateOf == "") != (v.RateFraction == 0):
			return nil, fmt.Errorf("%s: variant %q: rate_of and rate_fraction go together", path, v.Name)
		case v.RateOf != "" && !earlier[v.RateOf]:
			return nil, fmt.Errorf("%s: variant %q: rate_of %q names no variant before it", path, v.Name, v.RateOf)
		case v.RateFraction < 0 || v.RateFraction > 1:
			return nil, fmt.Errorf("%s: variant %q: rate_fraction must be above 0 and at most 1, got %g", path, v.Name, v.RateFraction)
		}
		earlier[v.Name] = true
	}
	return f.Variants, nil
}

// checkKafkaVariant refuses what a variant's Kafka tier cannot measure.
func checkKafkaVariant(v *variant) error {
	switch v.Kafka {
	case "":
		return nil
	case kafkaAgent, kafkaGateway, kafkaTiers:
	default:
		return fmt.Errorf("kafka must be %q, %q or %q, got %q", kafkaAgent, kafkaGateway, kafkaTiers, v.Kafka)
	}
	switch {
	case v.Collector != "tracegate":
		return fmt.Errorf("kafka %s: only tracegate has the Kafka components", v.Kafka)
	case len(v.Overlays) > 0:
		return fmt.Errorf("kafka %s: no overlays (the tiers' are configs/kafka/*.yaml)", v.Kafka)
	case v.KeepFraction > 0:
		return fmt.Errorf("kafka %s: no keep_fraction (the agent stores every trace in Kafka)", v.Kafka)
	case v.DeliveryLatency && v.Kafka != kafkaTiers:
		return fmt.Errorf("kafka %s: delivery_latency needs the clients' acknowledgements and the stand-in in one run (kafka %s)", v.Kafka, kafkaTiers)
	}
	return nil
}

// checkVariantProtocols refuses a sweep whose variants with a keep fraction would run a protocol
// without a sampling priority, or whose variants for Datakit's port a protocol it does not take.
func checkVariantProtocols(variants []variant, protocols []string) error {
	for _, v := range variants {
		for _, p := range protocols {
			if err := loadgen.CheckKeepFraction(p, v.KeepFraction); err != nil {
				return fmt.Errorf("sweep variant %q: keep_fraction: %w", v.Name, err)
			}
			if v.Target == targetDatakit {
				if _, err := loadgen.DatakitPath(p); err != nil {
					return fmt.Errorf("sweep variant %q: target %s: %w", v.Name, v.Target, err)
				}
			}
		}
	}
	return nil
}

// expectedSpans is what Elasticsearch must hold after a run of coll with variant v for which
// tracegen reported g: every acknowledged span, or the acknowledged spans of the kept traces when
// the load carries a keep fraction and the collector honours it; nothing from the floor.
func expectedSpans(coll string, v variant, g loadgen.Result) int {
	switch {
	case coll == floorCollector:
		return 0
	case v.KeepFraction > 0 && v.Expect != expectAll:
		return g.SpansKeptAcked
	}
	return g.SpansAcked
}

// job is one measurement: a collector in a mode with its configuration file, one protocol, and
// the sweep variant (none outside sweeps).
type job struct {
	coll, mode, protocol, cfg string
	variant                   variant
	// rate is the variant's offered rate (rate_of), known once the run it refers to is done;
	// rateErr says why there is none.
	rate    float64
	rateErr error
}

// jobs lists the measurements in table order: mode, protocol, collector — or, for a sweep, each
// variant for each protocol. Protocols a collector lacks and modes it has no configuration for
// are left out; the floor runs once per protocol.
func jobs(o options) []job {
	var out []job
	add := func(coll, mode, protocol string, v variant) {
		if coll == "stock" && !stockSupports(protocol) {
			return
		}
		if cfg, ok := modeConfigs[coll][mode]; ok {
			out = append(out, job{coll: coll, mode: mode, protocol: protocol, cfg: cfg, variant: v})
		}
	}
	if len(o.variants) > 0 {
		for _, protocol := range o.protocols {
			for _, v := range o.variants {
				add(v.Collector, v.Mode, protocol, v)
			}
		}
		return out
	}
	for i, mode := range o.modes {
		for _, protocol := range o.protocols {
			for _, coll := range o.colls {
				if coll == floorCollector {
					// The floor has no delivery mode: it runs once per protocol, beside the
					// first mode's runs.
					if i == 0 {
						add(coll, floorMode, protocol, variant{})
					}
					continue
				}
				add(coll, mode, protocol, variant{})
			}
		}
	}
	return out
}

// halfRate is fraction of stock's saturation request rate for protocol: stock's closed-loop
// nobuffer run of that protocol in sat (ddtrace, which stock cannot receive: its otlp-http run),
// in requests/s of sat's spans per request.
func halfRate(sat *report, protocol string, fraction float64) (float64, error) {
	ref := protocol
	if !stockSupports(protocol) {
		ref = loadgen.OTLPHTTP
	}
	x := sat.find("stock", "nobuffer", ref)
	if x == nil || x.E2ESpansPerSec <= 0 || x.Rate > 0 || sat.Spans <= 0 {
		return 0, fmt.Errorf("the saturation report (%s) has no closed-loop stock nobuffer run of %s", sat.Date.Format("2006-01-02 15:04"), ref)
	}
	return fraction * x.E2ESpansPerSec / float64(sat.Spans), nil
}

// variantRate is the request rate j's variant offers: rate_fraction of the mean acknowledged
// spans/s of the rate_of comparison's closed-loop runs of the same protocol so far in rep (the
// variant it names and those named alike up to a comma: "direct", "direct, again"), in requests
// of spans spans; 0 without rate_of. A mean, so that one run slowed by the machine does not set
// the rate alone.
func variantRate(rep *report, j job, spans int) (float64, error) {
	v := j.variant
	if v.RateOf == "" {
		return 0, nil
	}
	var sum float64
	n := 0
	for _, x := range rep.Runs {
		if x.Protocol == j.protocol && comparisonName(x.Variant) == v.RateOf && x.Error == "" && x.Rate == 0 && x.AcceptedSpansPerSec > 0 {
			sum += x.AcceptedSpansPerSec
			n++
		}
	}
	if n == 0 || spans <= 0 {
		return 0, fmt.Errorf("rate_of %q: no closed-loop run of %s without an error in this run", v.RateOf, j.protocol)
	}
	return v.RateFraction * sum / float64(n) / float64(spans), nil
}

// saturationSource describes the saturation report in use ("" without -rate-fraction).
func (o options) saturationSource() string {
	if o.saturation == nil {
		return ""
	}
	return fmt.Sprintf("%s of %s", o.saturationPath, o.saturation.Date.Format("2006-01-02 15:04 UTC"))
}
