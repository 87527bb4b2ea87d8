// Package esstandin is an Elasticsearch bulk-API stand-in: a TEST AND DEMO TOOL, not a database.
//
// No Elasticsearch can run on the machines tracegate is developed and tested on, so tests, the demo
// and the benchmarks talk to this server instead. It answers everything the contrib elasticsearch
// exporter (v0.148.0) calls the way Elasticsearch 8.x does:
//
//   - GET / with a version body;
//   - POST|PUT /_bulk and /{index}/_bulk with NDJSON bodies, gzip, filter_path and require_data_stream;
//   - the X-Elastic-Product: Elasticsearch header on every response (the client's product check);
//   - a positional items array with a per-item status (201, or a per-item error) and 400/406/413
//     error bodies for requests Elasticsearch refuses as a whole;
//   - data stream rules: writes to a data stream must be op_type create and carry @timestamp, and
//     require_data_stream=true fails items whose target matches no data stream template.
//
// It records every accepted document (in memory and optionally as JSON lines), exposes counts,
// documents and duplicates by span id, and injects faults at run time: latency per bulk, a fraction
// of items answered 429, whole requests answered 503, connections reset or refused.
//
// Everything it does not implement (search, mappings, updates, deletes, security) is answered with an
// error, never with a fake success.
package esstandin
