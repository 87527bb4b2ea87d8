package main

import (
	"fmt"
	"os"
	"strings"

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
}

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
	for i, v := range f.Variants {
		if v.Name == "" {
			return nil, fmt.Errorf("%s: variant %d has no name", path, i+1)
		}
		if _, ok := modeConfigs[v.Collector][v.Mode]; !ok {
			return nil, fmt.Errorf("%s: variant %q: no configuration for collector %q in mode %q", path, v.Name, v.Collector, v.Mode)
		}
	}
	return f.Variants, nil
}

// job is one measurement: a collector in a mode with its configuration file, one protocol, and
// the sweep variant (none outside sweeps).
type job struct {
	coll, mode, protocol, cfg string
	variant                   variant
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

// saturationSource describes the saturation report in use ("" without -rate-fraction).
func (o options) saturationSource() string {
	if o.saturation == nil {
		return ""
	}
	return fmt.Sprintf("%s of %s", o.saturationPath, o.saturation.Date.Format("2006-01-02 15:04 UTC"))
}
