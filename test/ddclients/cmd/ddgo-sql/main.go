// Command ddgo-sql sends one trace with the real Go tracer, dd-trace-go v2: a server span and a
// database child whose resource is the statement given with -query, as dd-trace-go's database/sql
// integration sends a query (the statement as the resource, span type sql, no query tag). It
// prints the trace's ids as one JSON line, so a test can look for the spans at the other end.
//
//	ddgo-sql -agent-url http://127.0.0.1:8126 -query "SELECT * FROM users WHERE email = 'a@b.c'"
//
// The process exits non-zero if the tracer logged an error.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/DataDog/dd-trace-go/v2/ddtrace/ext"
	"github.com/DataDog/dd-trace-go/v2/ddtrace/tracer"

	"github.com/tracegate/tracegate/test/ddclients/internal/ddquiet"
)

// Sent is the line of output. The test-side twin of this type is in
// test/e2e/ddtrace_obfuscation_test.go.
type Sent struct {
	TraceID      string `json:"trace_id"`       // 128-bit, 32 lowercase hex digits
	ServerSpanID string `json:"server_span_id"` // 16 lowercase hex digits
	DBSpanID     string `json:"db_span_id"`
}

func main() {
	ddquiet.Apply("ddgo-sql")
	agentURL := flag.String("agent-url", os.Getenv("DD_TRACE_AGENT_URL"), "trace intake URL (default $DD_TRACE_AGENT_URL)")
	service := flag.String("service", ddquiet.EnvOr("DD_SERVICE", "ddgo-sql"), "service name (default $DD_SERVICE)")
	query := flag.String("query", "", "the statement the database span carries")
	flag.Parse()
	if *agentURL == "" || *query == "" {
		fmt.Fprintln(os.Stderr, "ddgo-sql: -agent-url (or DD_TRACE_AGENT_URL) and -query are required")
		os.Exit(2)
	}
	if err := run(*agentURL, *service, *query); err != nil {
		fmt.Fprintln(os.Stderr, "ddgo-sql:", err)
		os.Exit(1)
	}
}

func run(agentURL, service, query string) error {
	log := &ddquiet.Logger{}
	if err := tracer.Start(
		tracer.WithAgentURL(agentURL),
		tracer.WithService(service),
		tracer.WithLogger(log),
		tracer.WithLogStartup(false),
		tracer.WithStatsComputation(false),
		tracer.WithSendRetries(2),
	); err != nil {
		return fmt.Errorf("starting the tracer: %w", err)
	}
	start := time.Now()
	root := tracer.StartSpan("http.request",
		tracer.ResourceName("POST /users/lookup"),
		tracer.SpanType(ext.SpanTypeWeb),
		tracer.StartTime(start),
		tracer.Tag(ext.SpanKind, ext.SpanKindServer),
		tracer.Tag(ext.HTTPMethod, "POST"),
		tracer.Tag(ext.HTTPRoute, "/users/lookup"),
		tracer.Tag(ext.HTTPCode, "200"),
	)
	db := root.StartChild("postgres.query",
		tracer.ResourceName(query),
		tracer.SpanType(ext.SpanTypeSQL),
		tracer.StartTime(start.Add(time.Millisecond)),
		tracer.Tag(ext.SpanKind, ext.SpanKindClient),
		tracer.Tag(ext.Component, "database/sql"),
		tracer.Tag(ext.DBSystem, ext.DBSystemPostgreSQL),
		tracer.Tag("sql.query_type", "Query"),
	)
	db.Finish(tracer.FinishTime(start.Add(3 * time.Millisecond)))
	root.Finish(tracer.FinishTime(start.Add(5 * time.Millisecond)))
	tracer.Stop() // flushes, and waits for the payload to be sent

	if errs := log.Errors(); len(errs) > 0 {
		return fmt.Errorf("the tracer logged %d error(s), first: %s", len(errs), errs[0])
	}
	return json.NewEncoder(os.Stdout).Encode(Sent{
		TraceID:      root.Context().TraceID(),
		ServerSpanID: fmt.Sprintf("%016x", root.Context().SpanID()),
		DBSpanID:     fmt.Sprintf("%016x", db.Context().SpanID()),
	})
}
