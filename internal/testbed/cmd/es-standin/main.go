// Command es-standin runs the Elasticsearch bulk-API stand-in: a TEST AND DEMO TOOL that answers
// the calls the elasticsearch exporter makes the way Elasticsearch 8.x does and records what it
// accepted. It is not a database: nothing can be searched. See internal/testbed/esstandin.
//
//	es-standin -listen 127.0.0.1:9200 -record /tmp/docs.jsonl
//	es-standin -count-only   # for load tests: sources are counted, not parsed
//	curl -s localhost:9200/_standin/stats
//	curl -s -XPUT localhost:9200/_standin/faults -d '{"latency":"30ms","item_429_fraction":0.3}'
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "es-standin:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("es-standin", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:9200", "address to listen on")
	version := fs.String("es-version", esstandin.DefaultVersion, "Elasticsearch version to claim (decides the built-in data stream templates)")
	record := fs.String("record", "", "append every accepted document to this file as JSON lines")
	keep := fs.Bool("keep-documents", true, "keep accepted documents in memory for GET /_standin/documents (turn off for long benchmarks)")
	maxBody := fs.Int64("max-content-length", 100<<20, "largest request body in bytes, after decompression (Elasticsearch's http.max_content_length)")
	countOnly := fs.Bool("count-only", false, "benchmarks: do not parse document sources (count them, check only @timestamp), so the stand-in costs ~3 µs per document instead of ~20; implies -keep-documents=false")
	faults := fs.String("faults", "", `faults to inject from the start, as JSON, e.g. '{"latency":"30ms","item_429_fraction":0.1}'`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	srv, err := esstandin.New(esstandin.Options{Version: *version, KeepDocuments: *keep && !*countOnly, CountOnly: *countOnly, RecordPath: *record, MaxContentLength: *maxBody})
	if err != nil {
		return err
	}
	if *faults != "" {
		var f esstandin.Faults
		if err := json.Unmarshal([]byte(*faults), &f); err != nil {
			return fmt.Errorf("-faults: %w", err)
		}
		if err := srv.SetFaults(f); err != nil {
			return fmt.Errorf("-faults: %w", err)
		}
	}
	if err := srv.Start(*listen); err != nil {
		return err
	}
	fmt.Printf("es-standin (a test and demo stand-in for Elasticsearch %s) listening on %s\n", *version, srv.URL())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	st := srv.Stats()
	fmt.Printf("es-standin: %d documents accepted, %d rejected, %d duplicate spans\n", st.Documents, st.RejectedItems, st.DuplicateSpans)
	return srv.Close()
}
