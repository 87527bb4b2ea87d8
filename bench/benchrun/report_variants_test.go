package main

import (
	"strings"
	"testing"
)

// TestVariantsTable: one row per variant in run order, a column per protocol with spans per core
// and the ratio to the against: variant, "–" for a protocol a variant did not run, ⚠ for a failed
// run, and the peak RSS range over the protocols.
func TestVariantsTable(t *testing.T) {
	r := &report{Runs: []run{
		{Variant: "base", Protocol: "otlp-http", SpansPerCoreSec: 50000, AcceptedSpansPerCoreSec: 50000, CPUPercent: 90, PeakRSSMB: 150},
		{Variant: "GOGC 400", Against: "base", Protocol: "otlp-http", SpansPerCoreSec: 60000, AcceptedSpansPerCoreSec: 60000, CPUPercent: 90, PeakRSSMB: 250},
		{Variant: "base", Protocol: "ddtrace-v0.4", SpansPerCoreSec: 40000, AcceptedSpansPerCoreSec: 40000, CPUPercent: 90, PeakRSSMB: 170},
		{Variant: "GOGC 400", Against: "base", Protocol: "ddtrace-v0.4", SpansPerCoreSec: 30000, CPUPercent: 90, PeakRSSMB: 260, Error: "spans missing"},
		{Variant: "otlp only", Protocol: "otlp-http", SpansPerCoreSec: 51000, CPUPercent: 90, PeakRSSMB: 140},
	}}
	got := r.variantsTable()
	for _, want := range []string{
		"| variant | otlp-http | ddtrace-v0.4 | peak RSS MB |",
		"| base | 50000 | 40000 | 150–170 |",
		"| GOGC 400 | 60000 (1.20) | 30000 ⚠ | 250–260 |",
		"| otlp only | 51000 | – | 140–140 |",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing row %q in:\n%s", want, got)
		}
	}
	if strings.Index(got, "| base |") > strings.Index(got, "| GOGC 400 |") {
		t.Error("variants out of run order")
	}
}

// TestVariantsTableSampled: a run that stored fewer spans than it accepted (tail sampling) shows
// its accepted spans per core, marked, with the ratio of accepted spans to its against:.
func TestVariantsTableSampled(t *testing.T) {
	keepAll := run{Variant: "keep all", Protocol: "otlp-http", SpansPerCoreSec: 40000, AcceptedSpansPerCoreSec: 40000, CPUPercent: 90, PeakRSSMB: 700, SpansInES: 1000}
	keepAll.Gen.SpansAcked = 1000
	sampled := run{Variant: "default", Against: "keep all", Protocol: "otlp-http", SpansPerCoreSec: 8000, AcceptedSpansPerCoreSec: 70000, CPUPercent: 60, PeakRSSMB: 600, SpansInES: 120}
	sampled.Gen.SpansAcked = 1000
	r := &report{Runs: []run{keepAll, sampled}}
	got := r.variantsTable()
	for _, want := range []string{"| keep all | 40000 | 700–700 |", "| default | 70000 acc. (1.75) | 600–600 |"} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("missing row %q in:\n%s", want, got)
		}
	}
}
