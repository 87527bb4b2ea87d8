package esstandin

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"mime"
	"net"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracegate/tracegate/internal/esversion"
)

// Options configure a Server.
type Options struct {
	// Version is the Elasticsearch version the stand-in claims; it decides the built-in data stream
	// templates (the otel ones exist from 8.16). Default DefaultVersion.
	Version string
	// KeepDocuments keeps every accepted document in memory for Documents() and counts duplicate
	// spans; without it only counts are kept, so long benchmarks run in bounded memory.
	KeepDocuments bool
	// RecordPath, when set, appends every accepted document to this file as a JSON line.
	RecordPath string
	// CountOnly is for benchmarks, where the stand-in shares a CPU with the load generator: document
	// sources are not parsed (a malformed one is accepted; only the data stream's @timestamp rule
	// is checked, by a byte search), and the service is the first "service.name" or
	// "service":{"name" value found by a byte search. Index rules, ids, faults and replies stay
	// those of Elasticsearch. It excludes KeepDocuments and RecordPath.
	CountOnly bool
	// MaxContentLength bounds a request body after decompression, as http.max_content_length does.
	// Default 100 MiB, Elasticsearch's default.
	MaxContentLength int64
}

// DefaultVersion is the Elasticsearch version the stand-in reports unless told otherwise.
const DefaultVersion = "8.17.0"

const defaultMaxContentLength = 100 << 20

// Server is the Elasticsearch stand-in. Create it with New, serve with Start (or mount Handler).
type Server struct {
	opts    Options
	catalog *catalog
	store   *store
	setup   *setupStore
	faults  atomic.Pointer[Faults]
	onSpan  atomic.Pointer[func(traceID string)]
	seqNo   atomic.Int64
	idSeq   atomic.Int64

	idsMu sync.Mutex
	// ids maps a hash of "index/id" of every document with an id the client gave to its version:
	// 8 bytes a key, not the id's string, so that millions of ids (benchmarks with document ids
	// on) cost the stand-in's CPU and memory little. 64 bits: a collision is improbable below
	// billions of documents.
	ids    map[uint64]int64
	idSeed maphash.Seed

	mu       sync.Mutex
	srv      *http.Server
	ln       net.Listener
	addr     string
	refusing bool
	conns    map[net.Conn]struct{}
	serveErr chan error
}

// New returns a stand-in that is not yet listening.
func New(opts Options) (*Server, error) {
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if major, _ := esversion.Parse(opts.Version); major < 7 {
		return nil, fmt.Errorf("version %q: want a 7.x, 8.x or 9.x version", opts.Version)
	}
	if opts.MaxContentLength <= 0 {
		opts.MaxContentLength = defaultMaxContentLength
	}
	if opts.CountOnly && (opts.KeepDocuments || opts.RecordPath != "") {
		return nil, errors.New("CountOnly excludes KeepDocuments and RecordPath: they need parsed documents")
	}
	st, err := newStore(opts.KeepDocuments, opts.RecordPath)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:    opts,
		catalog: newCatalog(opts.Version, func() string { return time.Now().UTC().Format("2006.01.02") }),
		store:   st,
		setup:   newSetupStore(),
		ids:     map[uint64]int64{},
		idSeed:  maphash.MakeSeed(),
		conns:   map[net.Conn]struct{}{},
	}
	s.faults.Store(&Faults{})
	return s, nil
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves in the background.
func (s *Server) Start(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("es-standin listen: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addr = ln.Addr().String()
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         s.trackConn,
	}
	s.serveErr = make(chan error, 1)
	s.serveLocked(ln)
	return nil
}

func (s *Server) serveLocked(ln net.Listener) {
	s.ln = &resetListener{Listener: ln, s: s}
	go func(l net.Listener) {
		if err := s.srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
			select {
			case s.serveErr <- err:
			default:
			}
		}
	}(s.ln)
}

// URL is the base URL clients use, e.g. http://127.0.0.1:9200.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "http://" + s.addr
}

// Close stops serving and flushes the record file: Shutdown(context.Background()).
func (s *Server) Close() error {
	return s.Shutdown(context.Background())
}

// Shutdown stops serving and flushes the record file. Requests in flight get a moment (2 s, less
// if ctx ends sooner) to finish; connections still open after it (a client that connected and
// sent nothing, say) are closed. A caller whose ctx may already be cancelled (a run stopped by
// Ctrl-C) passes context.WithoutCancel(ctx).
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.srv
	s.mu.Unlock()
	var err error
	if srv != nil {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if err = srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			err = srv.Close()
		}
	}
	return errors.Join(err, s.store.close())
}

// atLeast reports whether the claimed version is major.minor or later.
func (s *Server) atLeast(major, minor int) bool {
	return esversion.AtLeast(s.opts.Version, major, minor)
}

// Stats returns the counters.
func (s *Server) Stats() Stats { return s.store.snapshot() }

// Documents returns the accepted documents (only with Options.KeepDocuments).
func (s *Server) Documents() []Document { return s.store.documents() }

// Reset forgets every document and counter (templates and created data streams stay).
func (s *Server) Reset() {
	s.store.reset()
	s.idsMu.Lock()
	s.ids = map[uint64]int64{}
	s.idsMu.Unlock()
}

// WaitForDocuments blocks until n documents were accepted or ctx ends.
func (s *Server) WaitForDocuments(ctx context.Context, n int) error {
	return s.store.waitUntil(ctx, func(st Stats) bool { return st.Documents >= n })
}

// WaitForSpans blocks until n span documents (see isSpanIndex) were accepted or ctx ends.
func (s *Server) WaitForSpans(ctx context.Context, n int) error {
	return s.store.waitUntil(ctx, func(st Stats) bool { return st.spans() >= n })
}

// WaitUntil blocks until cond holds for the stats or ctx ends.
func (s *Server) WaitUntil(ctx context.Context, cond func(Stats) bool) error {
	return s.store.waitUntil(ctx, cond)
}

// OnSpan calls fn with the trace id of every span document stored from now on (the first
// "trace_id" of the otel shape, or "trace":{"id" of ECS, found by a byte search; "" when there is
// none), once the bulk request that carried it is stored, so that a benchmark can time a trace's
// delivery. fn is called from the requests' goroutines, concurrently. nil stops the calls.
func (s *Server) OnSpan(fn func(traceID string)) {
	if fn == nil {
		s.onSpan.Store(nil)
		return
	}
	s.onSpan.Store(&fn)
}

// Faults returns the faults currently injected.
func (s *Server) Faults() Faults { return *s.faults.Load() }

// SetFaults replaces the injected faults. Turning ResetConnections on also resets open connections.
func (s *Server) SetFaults(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	s.faults.Store(&f)
	if f.ResetConnections {
		s.closeConns()
	}
	return nil
}

// SetRefusing closes the listening socket (clients get "connection refused") or opens it again on
// the same address.
func (s *Server) SetRefusing(refuse bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil || refuse == s.refusing {
		return nil
	}
	if refuse {
		s.refusing = true
		err := s.ln.Close()
		s.closeConnsLocked()
		return err
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("es-standin listen again: %w", err)
	}
	s.refusing = false
	s.serveLocked(ln)
	return nil
}

// PutTemplate installs or replaces an index template.
func (s *Server) PutTemplate(t IndexTemplate) { s.catalog.putTemplate(t) }

// Templates lists the installed index templates, built-in ones included.
func (s *Server) Templates() []IndexTemplate { return s.catalog.templateList() }

func (s *Server) trackConn(c net.Conn, state http.ConnState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch state {
	case http.StateNew:
		s.conns[c] = struct{}{}
	case http.StateClosed, http.StateHijacked:
		delete(s.conns, c)
	}
}

func (s *Server) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeConnsLocked()
}

func (s *Server) closeConnsLocked() {
	for c := range s.conns {
		resetConn(c)
		delete(s.conns, c)
	}
}

// resetConn closes with SO_LINGER 0, so the peer sees a reset rather than an orderly close.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// resetListener resets connections as they are accepted while Faults.ResetConnections is on.
type resetListener struct {
	net.Listener
	s *Server
}

func (l *resetListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || !l.s.Faults().ResetConnections {
			return c, err
		}
		resetConn(c)
	}
}

// Handler returns the HTTP handler: the Elasticsearch API subset plus the /_standin/ control API.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every Elasticsearch response carries the product header; clients refuse servers without it.
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		p := strings.Trim(r.URL.Path, "/")
		parts := strings.Split(p, "/")
		switch {
		case p == "":
			s.handleRoot(w, r)
		case parts[0] == "_standin":
			s.handleControl(w, r, parts[1:])
		case len(parts) <= 2 && parts[len(parts)-1] == "_bulk":
			if r.Method != http.MethodPost && r.Method != http.MethodPut {
				methodNotAllowed(w, r, "POST, PUT")
				return
			}
			index := ""
			if len(parts) == 2 {
				index = parts[0]
			}
			s.handleBulk(w, r, index)
		case len(parts) == 2 && parts[1] == "_count" && (r.Method == http.MethodGet || r.Method == http.MethodPost):
			writeJSON(w, http.StatusOK, map[string]any{
				"count":   s.count(parts[0]),
				"_shards": map[string]any{"total": 1, "successful": 1, "skipped": 0, "failed": 0},
			})
		case p == "_cluster/health" && r.Method == http.MethodGet:
			writeJSON(w, http.StatusOK, map[string]any{"cluster_name": "es-standin", "status": "green", "number_of_nodes": 1})
		case isSetupPath(p):
			kind, name, _ := splitSetupPath(p)
			s.handleSetup(w, r, kind, name)
		default:
			writeJSON(w, http.StatusBadRequest, (&requestError{
				http.StatusBadRequest, "illegal_argument_exception",
				"[es-standin] unsupported request [" + r.Method + " /" + p + "]: the stand-in implements only what tracegate calls",
			}).body())
		}
	})
}

func (s *Server) handleRoot(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		methodNotAllowed(w, r, "GET, HEAD")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"name":         "es-standin",
		"cluster_name": "es-standin",
		"cluster_uuid": "c3RhbmRpbi1jbHVzdGVy",
		"version": map[string]any{
			"number":                              s.opts.Version,
			"build_flavor":                        "default",
			"build_type":                          "es-standin",
			"minimum_wire_compatibility_version":  "7.17.0",
			"minimum_index_compatibility_version": "7.0.0",
		},
		"tagline": "You Know, for Search",
	})
}

// count sums the documents of every index or data stream matching a comma-separated pattern list.
func (s *Server) count(patterns string) int {
	n := 0
	for index, c := range s.store.snapshot().ByIndex {
		for p := range strings.SplitSeq(patterns, ",") {
			if ok, _ := path.Match(p, index); ok || p == "_all" {
				n += c
				break
			}
		}
	}
	return n
}

// handleControl serves the stand-in's own API, under /_standin/:
//
//	GET    /_standin/stats           counters (documents by index, duplicates, rejected items, ...)
//	GET    /_standin/documents       accepted documents as JSON lines (with KeepDocuments)
//	DELETE /_standin/documents       forget documents and counters
//	GET    /_standin/faults          the injected faults
//	PUT    /_standin/faults          replace them (JSON, see Faults)
//	PUT    /_standin/refuse?for=60s  refuse connections for a while (the listener is closed)
func (s *Server) handleControl(w http.ResponseWriter, r *http.Request, parts []string) {
	what := strings.Join(parts, "/")
	switch {
	case what == "stats" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Stats())
	case what == "documents" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/x-ndjson")
		enc := json.NewEncoder(w)
		for _, d := range s.Documents() {
			if err := enc.Encode(d); err != nil {
				return
			}
		}
	case what == "documents" && r.Method == http.MethodDelete:
		s.Reset()
		writeJSON(w, http.StatusOK, map[string]any{"acknowledged": true})
	case what == "faults" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, s.Faults())
	case what == "faults" && r.Method == http.MethodPut:
		var f Faults
		dec := json.NewDecoder(io.LimitReader(r.Body, 1<<16))
		dec.DisallowUnknownFields()
		err := dec.Decode(&f)
		if err == nil {
			err = s.SetFaults(f)
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, (&requestError{http.StatusBadRequest, "illegal_argument_exception", err.Error()}).body())
			return
		}
		writeJSON(w, http.StatusOK, f)
	case what == "refuse" && r.Method == http.MethodPut:
		d, err := time.ParseDuration(r.URL.Query().Get("for"))
		if err != nil || d <= 0 {
			writeJSON(w, http.StatusBadRequest, (&requestError{http.StatusBadRequest, "illegal_argument_exception", "refuse needs ?for=<duration>"}).body())
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"refusing_for": d.String()})
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		go func() {
			_ = s.SetRefusing(true)
			time.Sleep(d)
			_ = s.SetRefusing(false)
		}()
	default:
		writeJSON(w, http.StatusNotFound, (&requestError{http.StatusNotFound, "resource_not_found_exception", "no stand-in control endpoint [" + r.Method + " /_standin/" + what + "]"}).body())
	}
}

// readBody reads a request body, decompressing gzip or deflate, bounded by limit after
// decompression, and checks the media type as Elasticsearch does.
// readBody reads r's body, decompressed, into buf (reused across requests: growing a fresh slice
// for every bulk was a third of the stand-in's CPU, BenchmarkBulk). The bytes are buf's: valid
// until buf is reused.
func readBody(r *http.Request, limit int64, buf *bytes.Buffer) ([]byte, *requestError) {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case ct == "":
		return nil, &requestError{http.StatusNotAcceptable, "media_type_header_exception", "Content-Type header is missing"}
	case err != nil:
		return nil, &requestError{http.StatusNotAcceptable, "media_type_header_exception", "Invalid media-type value on headers [Content-Type]"}
	}
	switch mt {
	case "application/json", "application/x-ndjson", "application/vnd.elasticsearch+json", "application/vnd.elasticsearch+x-ndjson":
	default:
		return nil, &requestError{http.StatusNotAcceptable, "media_type_header_exception", "Content-Type header [" + ct + "] is not supported"}
	}
	var body io.Reader = r.Body
	switch enc := strings.ToLower(r.Header.Get("Content-Encoding")); enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			return nil, &requestError{http.StatusBadRequest, "illegal_argument_exception", "invalid gzip body: " + err.Error()}
		}
		body = zr
	case "deflate":
		// HTTP's deflate is zlib-wrapped (RFC 9110), but clients also send raw DEFLATE, and
		// Elasticsearch (Netty) accepts both: a zlib header decides.
		br := bufio.NewReader(r.Body)
		if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, &requestError{http.StatusBadRequest, "illegal_argument_exception", "invalid deflate body: " + err.Error()}
			}
			body = zr
		} else {
			body = flate.NewReader(br)
		}
	default:
		return nil, &requestError{http.StatusBadRequest, "illegal_argument_exception", "unsupported Content-Encoding [" + enc + "]"}
	}
	b, err := readAllInto(buf, io.LimitReader(body, limit+1))
	if err != nil {
		return nil, &requestError{http.StatusBadRequest, "illegal_argument_exception", "cannot read body: " + err.Error()}
	}
	if int64(len(b)) > limit {
		return nil, &requestError{
			http.StatusRequestEntityTooLarge, "http_content_too_long",
			fmt.Sprintf("request body exceeds http.max_content_length [%d bytes]", limit),
		}
	}
	return b, nil
}

// bodyBuffers hold request bodies while their handler runs.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readAllInto reads r to its end into buf (emptied first) and returns buf's bytes.
func readAllInto(buf *bytes.Buffer, r io.Reader) ([]byte, error) {
	buf.Reset()
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, allowed string) {
	w.Header().Set("Allow", allowed)
	writeJSON(w, http.StatusMethodNotAllowed, map[string]any{
		"error":  "Incorrect HTTP method for uri [" + r.URL.Path + "] and method [" + r.Method + "], allowed: [" + allowed + "]",
		"status": http.StatusMethodNotAllowed,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"es-standin cannot encode its response","status":500}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
