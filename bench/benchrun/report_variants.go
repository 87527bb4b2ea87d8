package main

import (
	"fmt"
	"slices"
	"strings"
)

// tableVariants is report.Table for a sweep's compact table: one row per variant, a column per
// protocol with its stored spans per core and the ratio to its against:, and the peak RSS range.
// Every other measure is in the results file; the section stays small enough for
// docs/benchmarks.md whatever the number of protocols.
const tableVariants = "variants"

// variantsTable renders the compact table, variants and protocols in the order they ran.
func (r *report) variantsTable() string {
	var variants, protocols []string
	for _, x := range r.Runs {
		if !slices.Contains(variants, x.Variant) {
			variants = append(variants, x.Variant)
		}
		if !slices.Contains(protocols, x.Protocol) {
			protocols = append(protocols, x.Protocol)
		}
	}
	header := "| variant | " + strings.Join(protocols, " | ") + " | peak RSS MB |\n"
	var b strings.Builder
	b.WriteString(header + separator(header, 1))
	for _, v := range variants {
		cells := []string{v}
		lo, hi := 0.0, 0.0
		for _, p := range protocols {
			x := r.findVariant(v, p)
			cells = append(cells, r.perCoreCell(x))
			if x != nil && x.PeakRSSMB > 0 {
				lo, hi = minPositive(lo, x.PeakRSSMB), max(hi, x.PeakRSSMB)
			}
		}
		cells = append(cells, fmt.Sprintf("%.0f–%.0f", lo, hi))
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	return "Stored spans per second of the collector's CPU (\"acc.\": accepted spans, for a variant that stores fewer), and × its `against:` (same protocol and run):\n\n" + b.String()
}

// perCoreCell is one run's cell of the compact table: "–" without a run, ⚠ after a failed one.
// A run that stored fewer spans than it accepted (a collector that samples) is measured on the
// spans it accepted, marked "acc.": the work per span sent is what sampling saves.
func (r *report) perCoreCell(x *run) string {
	if x == nil {
		return "–"
	}
	perCore, ratio, mark := x.SpansPerCoreSec, 1, ""
	if x.sampled() {
		perCore, ratio, mark = x.AcceptedSpansPerCoreSec, 0, " acc."
	}
	cell := fmt.Sprintf("%.0f%s", perCore, mark)
	if x.Error != "" {
		return cell + " ⚠"
	}
	if _, values := r.against(x); values != nil {
		cell += " (" + ratioCells(values[ratio:ratio+1]) + ")"
	}
	return cell
}

// sampled says the run stored fewer spans than it accepted, by 1 % or more: the collector decided
// not to store some.
func (r *run) sampled() bool {
	return r.Gen.SpansAcked > 0 && float64(r.SpansInES) < 0.99*float64(r.Gen.SpansAcked)
}

// minPositive is the smaller of a and b, a 0 meaning "none yet".
func minPositive(a, b float64) float64 {
	if a == 0 {
		return b
	}
	return min(a, b)
}
