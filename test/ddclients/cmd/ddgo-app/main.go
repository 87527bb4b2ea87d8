// Command ddgo-app is a small traced web application on dd-trace-go v2 and its contrib packages: a
// net/http server (contrib/net/http's ServeMux, route "GET /users/{id}" and "GET /fail/{id}") that
// reads the user from an in-memory SQLite database and calls an inventory service over HTTP with
// the contrib-wrapped http.Client. The program sends the requests itself, so each makes a trace as
// a real application would: the server span (http.request, resource "GET /users/{id}"), a database
// span (sqlite.query) and an HTTP client span (http.request, resource "GET") as its children, and
// the inventory server's span as the client span's child (through the propagation headers).
//
// GET /fail/{id} does the same, then records an error of its own on the request's span as a
// handled error (span.SetTag(ext.Error, err)) and answers 200 (a 5xx would make the contrib
// replace the error with "500: Internal Server Error").
//
// The database span: contrib/database/sql/v2 is not served by the module proxy this project uses,
// so tracedQuery makes the span that contrib's Open("sqlite", dsn, WithChildSpansOnly()) makes for
// a QueryContext (conn.go's tryTrace at v2.12.0): the same operation and service names (from the
// tracer's own naming schema for database/sql), type, component, span.kind, db.system ("other_sql"
// for a driver it does not know), sql.query_type, the query as resource, the error.
//
// It prints one JSON line per request (see the README), and exits non-zero if the tracer logged an
// error (a payload the intake refused or could not take).
//
//	ddgo-app -agent-url http://127.0.0.1:8126 -service shop -requests 5
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	httptrace "github.com/DataDog/dd-trace-go/contrib/net/http/v2"
	"github.com/DataDog/dd-trace-go/v2/ddtrace/ext"
	"github.com/DataDog/dd-trace-go/v2/ddtrace/tracer"
	"github.com/DataDog/dd-trace-go/v2/instrumentation"
	_ "modernc.org/sqlite" // the "sqlite" driver, pure Go

	"github.com/tracegate/tracegate/test/ddclients/internal/ddquiet"
)

// Request is one line of output: a request the program sent and the spans it made.
type Request struct {
	TraceID          string `json:"trace_id"`           // 128-bit, 32 lowercase hex digits
	ServerSpanID     string `json:"server_span_id"`     // the web server's span, 16 hex digits
	ClientSpanID     string `json:"client_span_id"`     // the outgoing request's span
	DBSpanID         string `json:"db_span_id"`         // the query's span
	DBService        string `json:"db_service"`         // the query span's service
	Query            string `json:"query"`              // the SQL it ran
	DownstreamSpanID string `json:"downstream_span_id"` // the inventory server's span
	Method           string `json:"method"`
	Path             string `json:"path"`
	Route            string `json:"route"`
	Status           int    `json:"status"`
	Error            string `json:"error"` // the handled error's message, "" for none
	URL              string `json:"url"`
	URLQuery         string `json:"url_query"`
	DownstreamURL    string `json:"downstream_url"`
	User             string `json:"user"` // what the query found
}

const (
	driverName = "sqlite"
	userQuery  = "SELECT name FROM users WHERE id = ?"
	userAgent  = "tracegate-e2e/1.0"
	urlQuery   = "lang=en" // every request has a query string, for url.query
)

func main() {
	ddquiet.Apply("ddgo-app")
	agentURL := flag.String("agent-url", os.Getenv("DD_TRACE_AGENT_URL"), "trace intake URL, e.g. http://127.0.0.1:8126 (default $DD_TRACE_AGENT_URL)")
	service := flag.String("service", ddquiet.EnvOr("DD_SERVICE", "ddgo-app"), "service name (default $DD_SERVICE)")
	requests := flag.Int("requests", 5, "requests to GET /users/{id}")
	failures := flag.Int("failures", 1, "requests to GET /fail/{id}")
	flag.Parse()
	if *agentURL == "" {
		fmt.Fprintln(os.Stderr, "ddgo-app: -agent-url or DD_TRACE_AGENT_URL is required")
		os.Exit(2)
	}
	if *requests < 1 || *failures < 0 {
		fmt.Fprintln(os.Stderr, "ddgo-app: -requests must be at least 1, -failures at least 0")
		os.Exit(2)
	}
	if err := run(*agentURL, *service, *requests, *failures); err != nil {
		fmt.Fprintln(os.Stderr, "ddgo-app:", err)
		os.Exit(1)
	}
}

func run(agentURL, service string, requests, failures int) error {
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
	stopped := false
	defer func() {
		if !stopped {
			tracer.Stop()
		}
	}()

	db, err := openDB(requests + failures)
	if err != nil {
		return err
	}
	defer db.Close()

	inventoryMux := httptrace.NewServeMux()
	inventoryMux.HandleFunc("GET /stock/{sku}", inventory)
	inventoryURL, stopInventory, err := serve(inventoryMux)
	if err != nil {
		return err
	}
	defer stopInventory()

	a := &app{db: db, inventoryURL: inventoryURL, client: httptrace.WrapClient(&http.Client{Timeout: 10 * time.Second})}
	mux := httptrace.NewServeMux()
	mux.HandleFunc("GET /users/{id}", a.user)
	mux.HandleFunc("GET /fail/{id}", a.fail)
	base, stopWeb, err := serve(mux)
	if err != nil {
		return err
	}
	defer stopWeb()

	// The program's own requests are the world outside the application: a plain client, neither
	// traced nor sending trace headers, so the server span is the root of its trace.
	outside := &http.Client{Timeout: 10 * time.Second}
	var plan []string
	for i := range requests {
		plan = append(plan, fmt.Sprintf("/users/%d", i+1))
	}
	for i := range failures {
		plan = append(plan, fmt.Sprintf("/fail/%d", requests+i+1))
	}
	var sent []Request
	for _, path := range plan {
		r, err := get(outside, base+path+"?"+urlQuery)
		if err != nil {
			return err
		}
		sent = append(sent, r)
	}
	stopWeb()
	stopInventory()
	tracer.Stop() // flushes, and waits for the payload to be sent
	stopped = true

	if errs := log.Errors(); len(errs) > 0 {
		return fmt.Errorf("the tracer logged %d error(s), first: %s", len(errs), errs[0])
	}
	enc := json.NewEncoder(os.Stdout)
	for _, s := range sent {
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return nil
}

// get sends the program's request and reads what the handler says it did.
func get(c *http.Client, url string) (Request, error) {
	req, err := http.NewRequest(http.MethodGet, url, http.NoBody)
	if err != nil {
		return Request{}, err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := c.Do(req)
	if err != nil {
		return Request{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Request{}, err
	}
	var r Request
	if err := json.Unmarshal(body, &r); err != nil {
		return Request{}, fmt.Errorf("GET %s: %s %s: %w", url, resp.Status, body, err)
	}
	if r.ServerSpanID == "" || r.ClientSpanID == "" || r.DBSpanID == "" {
		return Request{}, fmt.Errorf("GET %s: %s %s: span ids missing", url, resp.Status, body)
	}
	r.Status = resp.StatusCode
	r.URL = url
	r.URLQuery = urlQuery
	return r, nil
}

// serve serves h on a random loopback port until the returned function is called.
func serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// openDB opens an in-memory database with n users. Its statements run outside any span, so (as
// with contrib's WithChildSpansOnly) they are not traced.
func openDB(n int) (*sql.DB, error) {
	db, err := sql.Open(driverName, "file::memory:")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1) // one connection, one in-memory database
	if _, err := db.Exec("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"); err != nil {
		db.Close()
		return nil, err
	}
	for i := 1; i <= n; i++ {
		if _, err := db.Exec("INSERT INTO users (id, name) VALUES (?, ?)", i, fmt.Sprintf("user-%d", i)); err != nil {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

type app struct {
	db           *sql.DB
	inventoryURL string
	client       *http.Client
}

// handle does what both routes do: the query, the inventory call; it answers with the ids.
func (a *app) handle(w http.ResponseWriter, r *http.Request, route string, fail bool) {
	ctx := r.Context()
	span, ok := tracer.SpanFromContext(ctx)
	if !ok {
		http.Error(w, "no span in the request's context", http.StatusInternalServerError)
		return
	}
	id := r.PathValue("id")
	out := Request{
		TraceID: span.Context().TraceID(), ServerSpanID: hexID(span.Context().SpanID()),
		Method: r.Method, Path: r.URL.Path, Route: route, Query: userQuery,
	}
	user, dbSpan, err := tracedQuery(ctx, a.db, userQuery, id)
	dbService := sqlService()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out.User, out.DBSpanID, out.DBService = user, hexID(dbSpan.Context().SpanID()), dbService
	out.DownstreamURL = a.inventoryURL + "/stock/" + id
	stock, err := a.stock(ctx, out.DownstreamURL)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.ClientSpanID, out.DownstreamSpanID = stock.ParentID, stock.SpanID
	if fail {
		err := fmt.Errorf("user %s is locked", id)
		span.SetTag(ext.Error, err)
		out.Error = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func (a *app) user(w http.ResponseWriter, r *http.Request) { a.handle(w, r, "/users/{id}", false) }
func (a *app) fail(w http.ResponseWriter, r *http.Request) { a.handle(w, r, "/fail/{id}", true) }

// stockReply is the inventory's answer: its own span and the caller's (from the traceparent header).
type stockReply struct {
	SKU      string `json:"sku"`
	SpanID   string `json:"span_id"`
	ParentID string `json:"parent_id"`
}

func (a *app) stock(ctx context.Context, url string) (stockReply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return stockReply{}, err
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return stockReply{}, err
	}
	defer resp.Body.Close()
	var s stockReply
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return stockReply{}, fmt.Errorf("GET %s: %s: %w", url, resp.Status, err)
	}
	if s.SpanID == "" || s.ParentID == "" {
		return stockReply{}, fmt.Errorf("GET %s: %s: no span ids in %+v", url, resp.Status, s)
	}
	return s, nil
}

// inventory answers with its span id and its parent's, the caller's client span (W3C traceparent:
// version-traceid-parentid-flags).
func inventory(w http.ResponseWriter, r *http.Request) {
	s := stockReply{SKU: r.PathValue("sku")}
	if span, ok := tracer.SpanFromContext(r.Context()); ok {
		s.SpanID = hexID(span.Context().SpanID())
	}
	if parts := strings.Split(r.Header.Get("traceparent"), "-"); len(parts) == 4 {
		s.ParentID = parts[2]
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}

// sqlInstr names database/sql spans as contrib/database/sql does.
var sqlInstr = instrumentation.Load(instrumentation.PackageDatabaseSQL)

// tracedQuery runs query with arg and reads one string, with the span contrib/database/sql makes
// for it (conn.go, TracedConn.QueryContext and tryTrace at v2.12.0; see the package comment).
func tracedQuery(ctx context.Context, db *sql.DB, query string, arg any) (string, *tracer.Span, error) {
	start := time.Now()
	rows, err := db.QueryContext(ctx, query, arg)
	span := traceQuery(ctx, "Query", query, start, err)
	if err != nil {
		return "", span, err
	}
	defer rows.Close()
	var name string
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return "", span, err
		}
		return "", span, errors.New("no such user")
	}
	if err := rows.Scan(&name); err != nil {
		return "", span, err
	}
	return name, span, rows.Err()
}

func traceQuery(ctx context.Context, queryType, query string, start time.Time, err error) *tracer.Span {
	// normalizeDBSystem: only mysql, postgres, pgx and sqlserver have a db.system of their own.
	dbSystem := ext.DBSystemOtherSQL
	opts := []tracer.StartSpanOption{
		instrumentation.ServiceNameWithSource(sqlService(), "opt.sql_driver"),
		tracer.SpanType(ext.SpanTypeSQL),
		tracer.StartTime(start),
		tracer.Tag(ext.Component, string(instrumentation.PackageDatabaseSQL)),
		tracer.Tag(ext.SpanKind, ext.SpanKindClient),
		tracer.Tag(ext.DBSystem, dbSystem),
	}
	if rate := sqlInstr.AnalyticsRate(false); !math.IsNaN(rate) {
		opts = append(opts, tracer.Tag(ext.EventSampleRate, rate))
	}
	name := sqlInstr.OperationName(instrumentation.ComponentDefault, instrumentation.OperationContext{
		"driverName": driverName,
		ext.DBSystem: driverName,
	})
	span, _ := tracer.StartSpanFromContext(ctx, name, opts...)
	span.SetTag("sql.query_type", queryType)
	span.SetTag(ext.ResourceName, query)
	if err != nil {
		span.SetTag(ext.Error, err)
	}
	span.Finish()
	return span
}

// sqlService is the service of the driver's spans (Open without WithService).
func sqlService() string {
	return sqlInstr.ServiceName(instrumentation.ComponentDefault, instrumentation.OperationContext{
		"driverName":      driverName,
		"registerService": "",
	})
}

func hexID(id uint64) string { return fmt.Sprintf("%016x", id) }
