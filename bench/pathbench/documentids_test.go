package pathbench

import (
	"testing"

	"github.com/tracegate/tracegate/internal/testbed/cpubench"
)

// BenchmarkDocumentIDsCPU: process CPU per span of configs/default.yaml's trace path behind the
// receiver (elasticmapping → buffer in memory mode → contrib exporter) with the document ids
// (document_ids, traces_dynamic_id) against without, for the spans make bench sends (tracegen's,
// decoded from OTLP protobuf as the receiver does), alternated in chunks; the fake Elasticsearch
// runs in a child process. The receiver's own work is left out, so the share added is at least
// what make bench would show.
func BenchmarkDocumentIDsCPU(b *testing.B) {
	url := cpubench.StartFakeES(b)
	withIDs, withoutIDs := defaultTracePath(b, url, true), defaultTracePath(b, url, false)
	withIDs.reqs = otlpRequests(b, tracegenTraces(64))
	withoutIDs.reqs = withIDs.reqs
	without, with := alternateCPUPerSpan(b, withoutIDs, withIDs)
	b.ReportMetric(without, "cpu-ns/span-without-ids")
	b.ReportMetric(with, "cpu-ns/span-with-ids")
	b.ReportMetric(with-without, "cpu-ns/span-added")
	b.ReportMetric(100*(with-without)/without, "cpu-%-added")
}
