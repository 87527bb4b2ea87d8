// Command tracegate-demo shows tracegate at work on one machine, with no Elasticsearch: it starts
// the Elasticsearch stand-in (a test and demo tool), runs bin/tracegate with configs/default.yaml on
// its standard ports, sends traces over every protocol with real client libraries, and prints how
// many spans of each protocol reached Elasticsearch. `make demo` runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/collectorproc"
	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tracegate-demo:", err)
		os.Exit(1)
	}
}

func run() error {
	binary := flag.String("binary", "bin/tracegate", "the tracegate binary")
	config := flag.String("config", "configs/default.yaml", "the configuration to run")
	spans := flag.Int("spans", 300, "spans to send per protocol")
	record := flag.String("record", "", "also write every document the stand-in accepts to this JSON-lines file")
	flag.Parse()

	es, err := esstandin.New(esstandin.Options{RecordPath: *record})
	if err != nil {
		return err
	}
	if err := es.Start("127.0.0.1:0"); err != nil {
		return err
	}
	defer es.Close()
	fmt.Printf("Elasticsearch stand-in (test/demo tool) at %s\n", es.URL())

	bufferDir, err := os.MkdirTemp("", "tracegate-demo-buffer-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(bufferDir)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	proc, err := collectorproc.Start(ctx, collectorproc.Options{
		Binary:    *binary,
		Args:      []string{"--config", *config},
		Env:       []string{"ELASTICSEARCH_URL=" + es.URL(), "TRACEGATE_BUFFER_DIR=" + bufferDir},
		HealthURL: "http://127.0.0.1:13133/",
	})
	if err != nil {
		return fmt.Errorf("%w\n(are the standard ports 4317, 4318, 9411, 14250, 14268, 6831, 6832, 8126, 13133, 8888, 1777 and 55679 free?)", err)
	}
	defer func() {
		if err := proc.Stop(30 * time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "stopping tracegate:", err)
		}
	}()
	fmt.Printf("tracegate (pid %d) running %s\n\n", proc.Pid(), *config)

	ep := tracesend.Endpoints{
		OTLPGRPC: "127.0.0.1:4317", OTLPHTTP: "127.0.0.1:4318", Zipkin: "127.0.0.1:9411",
		JaegerHTTP: "127.0.0.1:14268", JaegerCompact: "127.0.0.1:6831", DDTrace: "127.0.0.1:8126",
	}
	sentBy := map[string]int{}
	total := 0
	for _, p := range tracesend.Protocols() {
		sent, err := p.Send(ctx, ep, "demo-"+p.Name, *spans)
		if err != nil {
			fmt.Printf("%-20s send failed: %v\n", p.Name, err)
			continue
		}
		sentBy[p.Name] = len(sent)
		total += len(sent)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	waitErr := es.WaitForSpans(waitCtx, total)

	st := es.Stats()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "protocol\tspans sent\tin Elasticsearch\t")
	missing := false
	for _, p := range tracesend.Protocols() {
		got := st.SpansByService["demo-"+p.Name]
		missing = missing || got != sentBy[p.Name] || sentBy[p.Name] == 0
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", p.Name, sentBy[p.Name], got)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("\nindices: %v; duplicates: %d; rejected: %d\n", st.ByIndex, st.DuplicateSpans, st.RejectedItems)
	if missing || waitErr != nil {
		return fmt.Errorf("not every span arrived (%w); tracegate log:\n%s", waitErr, proc.Log())
	}
	return nil
}
