package esstandin

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"time"
)

// Document is one accepted document as the stand-in recorded it.
type Document struct {
	// Index is the data stream or index name the client wrote to (not the backing index).
	Index  string          `json:"index"`
	ID     string          `json:"id"`
	Source json.RawMessage `json:"source"`
	// SpanID is the span id found in the document (otel "span_id", ECS "span.id", raw "SpanId"),
	// empty when there is none. It is what duplicates are counted by.
	SpanID string `json:"span_id,omitempty"`

	dedupKey    string // what two copies of one document share; empty when unknown
	service     string
	version     int64  // > 1: an index action overwrote the document of this index and id
	sourceBytes int    // the source line's length, which CountOnly keeps without the source
	traceID     string // for Server.OnSpan's function only
}

// Stats are the stand-in's counters since start or the last Reset.
type Stats struct {
	Documents int            `json:"documents"`
	ByIndex   map[string]int `json:"by_index"`
	// SpansByService counts span documents — those in traces-* indices and data streams, and in
	// the plain mode's tracegate-traces-* daily indices — by the
	// service name they carry (resource.attributes.service.name in otel mode, service.name in ECS
	// mode; "" when a document has none). Span events and logs are not spans.
	SpansByService map[string]int `json:"spans_by_service"`
	// SourceBytesByIndex sums, per index as in ByIndex, the lengths of the counted documents' source
	// lines in the decompressed bulk bodies (action lines and newlines excluded): divided by
	// ByIndex, the mean size of a document as Elasticsearch receives it. SpanSourceBytes is its sum
	// over the span documents of SpansByService. A refused item (a resent copy's 409) counts in
	// neither, so the mean is over stored documents.
	SourceBytesByIndex map[string]int64 `json:"source_bytes_by_index"`
	SpanSourceBytes    int64            `json:"span_source_bytes"`
	// DuplicateSpans counts documents seen before (same index, span id, event and timestamp);
	// only counted with Options.KeepDocuments.
	DuplicateSpans  int            `json:"duplicate_spans"`
	BulkRequests    int            `json:"bulk_requests"`
	RejectedItems   int            `json:"rejected_items"`
	FailedRequests  int            `json:"failed_requests"`
	BytesReceived   int64          `json:"bytes_received"`
	RejectedReasons map[string]int `json:"rejected_reasons"`
}

// spans is the number of span documents.
func (st Stats) spans() int {
	n := 0
	for _, c := range st.SpansByService {
		n += c
	}
	return n
}

// isSpanIndex reports whether documents written to index are spans: the traces-* data streams
// (otel and ecs mappings) and the tracegate-traces-* daily indices of internal/estemplates/plain.yaml.
func isSpanIndex(index string) bool {
	return strings.HasPrefix(index, "traces-") || strings.HasPrefix(index, "tracegate-traces-")
}

// store records accepted documents. Documents are kept in memory only when keepDocs is set, so
// long benchmark runs keep counting in bounded memory.
type store struct {
	mu       sync.Mutex
	keepDocs bool
	docs     []Document
	stats    Stats
	spans    map[string]int // dedupKey → times seen
	record   *bufio.Writer
	file     *os.File
	changed  chan struct{} // closed and replaced whenever documents are added
}

func newStore(keepDocs bool, recordPath string) (*store, error) {
	s := &store{keepDocs: keepDocs, changed: make(chan struct{})}
	s.resetLocked()
	if recordPath != "" {
		f, err := os.OpenFile(recordPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("open record file: %w", err)
		}
		s.file, s.record = f, bufio.NewWriter(f)
	}
	return s, nil
}

func (s *store) resetLocked() {
	s.docs = nil
	s.spans = map[string]int{}
	s.stats = Stats{ByIndex: map[string]int{}, SpansByService: map[string]int{}, SourceBytesByIndex: map[string]int64{}, RejectedReasons: map[string]int{}}
}

func (s *store) add(docs []Document) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range docs {
		if d.version > 1 {
			s.replaceLocked(d)
		} else {
			s.countLocked(d)
		}
		if s.record != nil {
			line, err := json.Marshal(d)
			if err != nil {
				return err
			}
			if _, err := s.record.Write(append(line, '\n')); err != nil {
				return fmt.Errorf("write record file: %w", err)
			}
		}
	}
	if s.record != nil {
		if err := s.record.Flush(); err != nil {
			return fmt.Errorf("write record file: %w", err)
		}
	}
	if len(docs) > 0 {
		close(s.changed)
		s.changed = make(chan struct{})
	}
	return nil
}

// countLocked counts and keeps a new document.
func (s *store) countLocked(d Document) {
	s.stats.Documents++
	s.stats.ByIndex[d.Index]++
	s.stats.SourceBytesByIndex[d.Index] += int64(d.sourceBytes)
	if isSpanIndex(d.Index) {
		s.stats.SpansByService[d.service]++
		s.stats.SpanSourceBytes += int64(d.sourceBytes)
	}
	// Duplicates are tracked only with keepDocs: the key set grows with every span, and long
	// benchmark runs must stay in bounded memory.
	if s.keepDocs && d.dedupKey != "" {
		s.spans[d.dedupKey]++
		if s.spans[d.dedupKey] > 1 {
			s.stats.DuplicateSpans++
		}
	}
	if s.keepDocs {
		s.docs = append(s.docs, d)
	}
}

// replaceLocked applies an overwrite: the counts stay (one document, as Elasticsearch counts it),
// the kept copy and the record file get the new source.
func (s *store) replaceLocked(d Document) {
	if !s.keepDocs {
		return
	}
	for i := len(s.docs) - 1; i >= 0; i-- {
		if s.docs[i].Index == d.Index && s.docs[i].ID == d.ID {
			s.docs[i] = d
			return
		}
	}
	// The version counted a write that was never stored (its request failed after the count):
	// this is the document's first copy.
	s.countLocked(d)
}

func (s *store) countRequest(bytes int64, failed bool, rejected map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.BulkRequests++
	s.stats.BytesReceived += bytes
	if failed {
		s.stats.FailedRequests++
	}
	for reason, n := range rejected {
		s.stats.RejectedItems += n
		s.stats.RejectedReasons[reason] += n
	}
}

func (s *store) snapshot() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.ByIndex = make(map[string]int, len(s.stats.ByIndex))
	maps.Copy(st.ByIndex, s.stats.ByIndex)
	st.SpansByService = make(map[string]int, len(s.stats.SpansByService))
	maps.Copy(st.SpansByService, s.stats.SpansByService)
	st.SourceBytesByIndex = make(map[string]int64, len(s.stats.SourceBytesByIndex))
	maps.Copy(st.SourceBytesByIndex, s.stats.SourceBytesByIndex)
	st.RejectedReasons = make(map[string]int, len(s.stats.RejectedReasons))
	maps.Copy(st.RejectedReasons, s.stats.RejectedReasons)
	return st
}

func (s *store) documents() []Document {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Document(nil), s.docs...)
}

func (s *store) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetLocked()
}

// waitUntil blocks until cond holds for the stats or ctx ends; cond runs under no lock on a
// snapshot, each time documents were added (and at least every second).
func (s *store) waitUntil(ctx context.Context, cond func(Stats) bool) error {
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		st := s.snapshot()
		if cond(st) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stand-in has %d documents (%v): %w", st.Documents, st.ByIndex, ctx.Err())
		case <-changed:
		case <-time.After(time.Second): // also wakes up after a reset
		}
	}
}

func (s *store) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == nil {
		return nil
	}
	err := s.record.Flush()
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	s.file = nil
	return err
}
