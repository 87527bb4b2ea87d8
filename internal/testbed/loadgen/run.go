package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Config is one load run.
type Config struct {
	Protocol string
	// Target is host:port of the protocol's receiver.
	Target string
	// Datakit sends the protocol's requests to the path Datakit serves its encoding at
	// (DatakitPath) instead of its own receiver's; Target is then Datakit's port.
	Datakit bool
	// Concurrency workers each send Requests requests (closed loop), unless Duration is set: then
	// they send until it ends.
	Concurrency int
	Requests    int
	Duration    time.Duration
	// Spans per request (one trace per request).
	Spans int
	// Rate > 0 paces the whole run at that many requests per second (open loop): request k is due
	// at start + k/Rate, and its latency counts from when it was due, so a slow server's queueing
	// shows in the latency instead of silently lowering the rate (coordinated omission).
	Rate float64
	// PoolSize pre-encoded payloads are cycled through (default 64).
	PoolSize int
	Service  string
	Seed     uint64
	// Timeout bounds one request (default 30s).
	Timeout time.Duration
	// KeepFraction > 0 (ddtrace protocols only, at most 1): the traces Kept picks from their
	// trace id carry sampling priority 2 (user keep), the others -1 (user reject), as a tracer
	// at DD_TRACE_SAMPLE_RATE=KeepFraction sends them. 0: every trace carries priority 1.
	KeepFraction float64
	// OnAck, when set, is called with the trace id of every acknowledged request (2xx) and the
	// time its answer arrived, from the workers' goroutines, concurrently.
	OnAck func(id TraceID, at time.Time)
}

// Result is what a run measured.
type Result struct {
	Protocol        string  `json:"protocol"`
	Target          string  `json:"target"`
	Datakit         bool    `json:"datakit,omitempty"` // sent to Datakit's path (Config.Datakit)
	Path            string  `json:"path,omitempty"`    // the URL path of an HTTP protocol
	Concurrency     int     `json:"concurrency"`
	SpansPerRequest int     `json:"spans_per_request"`
	Rate            float64 `json:"rate,omitempty"`
	Requests        int     `json:"requests"`
	SpansSent       int     `json:"spans_sent"`
	SpansAcked      int     `json:"spans_acked"` // spans of 2xx requests (UDP: every span written)
	// KeepFraction is Config.KeepFraction. SpansKept and SpansKeptAcked are the spans of the
	// traces with a keep decision (all of them without a keep fraction) among SpansSent and
	// SpansAcked: what a collector that honours the priority stores.
	KeepFraction    float64      `json:"keep_fraction,omitempty"`
	SpansKept       int          `json:"spans_kept"`
	SpansKeptAcked  int          `json:"spans_kept_acked"`
	Bytes           int64        `json:"bytes"`
	BytesPerRequest float64      `json:"bytes_per_request"`
	ElapsedSeconds  float64      `json:"elapsed_s"`
	RequestsPerSec  float64      `json:"requests_per_s"`
	SpansPerSec     float64      `json:"spans_per_s"`
	Status          StatusCounts `json:"status"`
	Latency         LatencyStats `json:"latency"`
	// LatencyOK is over the 2xx requests only: a collector that refuses quickly (429) lowers its
	// overall figures with fast refusals; this compares the requests that were taken.
	LatencyOK LatencyStats `json:"latency_2xx"`
	// Timeline is the latency of each second of the run, the requests grouped by when they fell due.
	Timeline []WindowStats `json:"timeline,omitempty"`
	Errors   []string      `json:"errors,omitempty"` // the first few distinct errors
	Start    time.Time     `json:"start"`
	End      time.Time     `json:"end"`
}

// sender sends one request and classifies the outcome into a status code key.
type sender interface {
	send(ctx context.Context, r *Request) (code string, class int, err error)
	close()
}

// Outcome classes.
const (
	classOK = iota
	classTooMany
	classServer
	classOther
	classTransport
)

func newSender(c Config) (sender, error) {
	if c.Datakit {
		if _, err := DatakitPath(c.Protocol); err != nil {
			return nil, err
		}
	}
	switch c.Protocol {
	case OTLPGRPC:
		return newGRPCSender(c)
	case JaegerUDPCompact:
		return &udpSender{target: c.Target}, nil
	case DDTraceV04, DDTraceV05, JaegerThriftHTTP, ZipkinJSON, ZipkinProto, OTLPHTTP, ElasticAPMIntake:
		p, err := urlPath(c)
		if err != nil {
			return nil, err
		}
		return newHTTPSender(c, p), nil
	}
	return nil, fmt.Errorf("unknown protocol %q (want one of %v)", c.Protocol, Protocols())
}

type httpSender struct {
	client    *http.Client
	url, path string
	protocol  string
}

func newHTTPSender(c Config, p string) *httpSender {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        c.Concurrency * 2,
		MaxIdleConnsPerHost: c.Concurrency * 2,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &httpSender{client: &http.Client{Transport: tr, Timeout: c.Timeout}, url: "http://" + c.Target + p, path: p, protocol: c.Protocol}
}

func (s *httpSender) send(ctx context.Context, r *Request) (string, int, error) {
	method := http.MethodPost
	if s.protocol == DDTraceV04 || s.protocol == DDTraceV05 {
		method = http.MethodPut
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url, bytes.NewReader(r.Parts[0]))
	if err != nil {
		return "", classTransport, err
	}
	req.Header.Set("Content-Type", contentType(s.protocol))
	if s.protocol == DDTraceV04 || s.protocol == DDTraceV05 {
		req.Header.Set("Datadog-Meta-Lang", "go")
		req.Header.Set("Datadog-Meta-Tracer-Version", "tracegen")
		req.Header.Set("X-Datadog-tracemodel.Trace-Count", "1")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return "", classTransport, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	code := strconv.Itoa(resp.StatusCode)
	switch {
	case resp.StatusCode/100 == 2:
		return code, classOK, nil
	case resp.StatusCode == http.StatusTooManyRequests:
		return code, classTooMany, nil
	case resp.StatusCode/100 == 5:
		return code, classServer, nil
	}
	return code, classOther, nil
}

func (s *httpSender) close() { s.client.CloseIdleConnections() }

// rawCodec sends pre-encoded protobuf bytes as the gRPC message and keeps the reply undecoded.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.(*[]byte); ok {
		return *b, nil
	}
	return nil, fmt.Errorf("rawCodec: unexpected %T", v)
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	if b, ok := v.(*[]byte); ok {
		*b = append((*b)[:0], data...)
		return nil
	}
	return fmt.Errorf("rawCodec: unexpected %T", v)
}

func (rawCodec) Name() string { return "proto" }

const otlpExportMethod = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"

type grpcSender struct {
	conns []*grpc.ClientConn
	next  atomic.Uint64
}

func newGRPCSender(c Config) (*grpcSender, error) {
	// A few connections, as several SDK exporters would open; the streams of one connection
	// share its HTTP/2 flow control.
	n := max(1, min(c.Concurrency, 8))
	s := &grpcSender{}
	for range n {
		conn, err := grpc.NewClient(c.Target, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
		if err != nil {
			s.close()
			return nil, err
		}
		s.conns = append(s.conns, conn)
	}
	return s, nil
}

func (s *grpcSender) send(ctx context.Context, r *Request) (string, int, error) {
	conn := s.conns[s.next.Add(1)%uint64(len(s.conns))]
	var reply []byte
	err := conn.Invoke(ctx, otlpExportMethod, &r.Parts[0], &reply)
	st, _ := status.FromError(err)
	code := st.Code()
	switch code {
	case codes.OK:
		return code.String(), classOK, nil
	case codes.ResourceExhausted:
		return code.String(), classTooMany, nil
	case codes.Unavailable, codes.Internal, codes.Unknown, codes.DataLoss:
		if code == codes.Unavailable && isTransport(err) {
			return code.String(), classTransport, err
		}
		return code.String(), classServer, err
	case codes.DeadlineExceeded, codes.Canceled:
		return code.String(), classTransport, err
	}
	return code.String(), classOther, err
}

// isTransport tells a connection failure from an UNAVAILABLE answered by the server.
func isTransport(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	st, _ := status.FromError(err)
	msg := st.Message()
	return bytes.Contains([]byte(msg), []byte("connection")) || bytes.Contains([]byte(msg), []byte("transport"))
}

func (s *grpcSender) close() {
	for _, c := range s.conns {
		_ = c.Close()
	}
}

// udpSender writes each part as one datagram; UDP has no reply, so a written request counts as
// 2xx ("sent") and the latency is the time to hand the packets to the kernel.
type udpSender struct {
	target string
	mu     sync.Mutex
	conns  []net.Conn
}

type udpConnKey struct{}

func (s *udpSender) send(ctx context.Context, r *Request) (string, int, error) {
	conn, _ := ctx.Value(udpConnKey{}).(net.Conn)
	if conn == nil {
		return "", classTransport, errors.New("no UDP connection")
	}
	for _, p := range r.Parts {
		if _, err := conn.Write(p); err != nil {
			return "", classTransport, err
		}
	}
	return "sent", classOK, nil
}

func (s *udpSender) dial() (net.Conn, error) {
	c, err := net.Dial("udp", s.target)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	return c, nil
}

func (s *udpSender) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		_ = c.Close()
	}
}

// Run pre-encodes the pool, then sends the load and returns what it measured.
func Run(ctx context.Context, c Config) (*Result, error) {
	c, err := withDefaults(c)
	if err != nil {
		return nil, err
	}
	pool, err := newPool(ctx, c.Protocol, c.Service, c.PoolSize, c.Spans, c.Seed, c.KeepFraction)
	if err != nil {
		return nil, err
	}
	snd, err := newSender(c)
	if err != nil {
		return nil, err
	}
	defer snd.close()
	l := newLoad(c, pool, snd)
	workers, end, err := l.runWorkers(ctx)
	if err != nil {
		return nil, err
	}
	return l.result(workers, end), nil
}

// withDefaults fills in what c leaves unset and refuses a run with no end.
func withDefaults(c Config) (Config, error) {
	c.Concurrency = max(c.Concurrency, 1)
	c.Spans = max(c.Spans, 1)
	if c.Requests < 1 && c.Duration <= 0 {
		return c, errors.New("need requests per worker or a duration")
	}
	if c.PoolSize <= 0 {
		c.PoolSize = 64
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.Service == "" {
		c.Service = "tracegen"
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	return c, nil
}

// load is one run in progress: what its workers share.
type load struct {
	c    Config
	pool *Pool
	snd  sender
	// hi is the high half of every request's trace id; the low half comes from the request's number.
	hi              uint64
	start, deadline time.Time // deadline is zero without a duration
	total           int64     // requests of a run without a duration
	seq             atomic.Int64
}

// newLoad starts the run's clock: requests fall due, and latencies count, from now.
func newLoad(c Config, pool *Pool, snd sender) *load {
	l := &load{
		c: c, pool: pool, snd: snd,
		hi:    tracemodel.FixID(splitmix64(c.Seed)),
		start: time.Now(),
		total: int64(c.Concurrency) * int64(c.Requests),
	}
	if c.Duration > 0 {
		l.deadline = l.start.Add(c.Duration)
	}
	return l
}

// workerStats is what one worker counted; the workers' are summed into the Result at the end, so
// that the request loop shares nothing but the request counter.
type workerStats struct {
	timed  []Timed
	ok     []time.Duration // the 2xx requests' latencies
	status StatusCounts
	bytes  int64
	spans  int
	acked  int
	kept   int
	keptOK int
	errs   []string
}

// runWorkers runs c.Concurrency workers until the load is sent and returns what each counted and
// when the last one finished; a worker that could not set up fails the run.
func (l *load) runWorkers(ctx context.Context) ([]workerStats, time.Time, error) {
	results := make([]workerStats, l.c.Concurrency)
	var wg sync.WaitGroup
	var setupErr atomic.Pointer[error]
	for w := range results {
		wg.Go(func() {
			if err := l.work(ctx, &results[w]); err != nil {
				setupErr.Store(&err)
			}
		})
	}
	wg.Wait()
	end := time.Now()
	if e := setupErr.Load(); e != nil {
		return nil, end, *e
	}
	return results, end, nil
}

// work is one worker: it sends requests until the load is sent, recording each in res. Its error
// is a failed set-up (a UDP socket); a request's error is counted, not returned.
func (l *load) work(ctx context.Context, res *workerStats) error {
	res.status.Codes = map[string]int{}
	wctx, err := l.workerContext(ctx)
	if err != nil {
		return err
	}
	if l.c.Duration <= 0 {
		res.timed = make([]Timed, 0, l.c.Requests)
	}
	var req Request
	for ctx.Err() == nil {
		k, due, ok := l.next(ctx)
		if !ok {
			return nil
		}
		req.Fill(&l.pool.Payloads[k%int64(len(l.pool.Payloads))], l.hi, splitmix64(l.c.Seed+uint64(k)))
		rctx, cancel := context.WithTimeout(wctx, l.c.Timeout)
		code, class, err := l.snd.send(rctx, &req)
		cancel()
		answered := time.Now()
		if class == classOK && l.c.OnAck != nil {
			l.c.OnAck(req.TraceID, answered)
		}
		res.record(&req, code, class, err, Timed{Due: due.Sub(l.start), Took: answered.Sub(due)})
	}
	return nil
}

// workerContext gives a UDP worker a socket of its own, in the context the UDP sender reads it
// from; the other senders share their connections.
func (l *load) workerContext(ctx context.Context) (context.Context, error) {
	u, ok := l.snd.(*udpSender)
	if !ok {
		return ctx, nil
	}
	conn, err := u.dial()
	if err != nil {
		return nil, err
	}
	return context.WithValue(ctx, udpConnKey{}, conn), nil
}

// next takes the next request's number and, at a fixed rate, waits until it is due. It returns
// when the request's latency counts from, and false once the requests are all taken, the
// duration is over or ctx is done.
func (l *load) next(ctx context.Context) (int64, time.Time, bool) {
	k := l.seq.Add(1) - 1
	if l.c.Duration <= 0 && k >= l.total {
		return 0, time.Time{}, false
	}
	due := time.Now()
	if l.c.Rate > 0 {
		due = l.dueAt(k)
		if d := time.Until(due); d > 0 {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return 0, time.Time{}, false
			}
		}
	}
	if !l.deadline.IsZero() && time.Now().After(l.deadline) {
		return 0, time.Time{}, false
	}
	return k, due, true
}

// dueAt is when request k falls due at a fixed rate.
func (l *load) dueAt(k int64) time.Time {
	return l.start.Add(time.Duration(float64(k) / l.c.Rate * float64(time.Second)))
}

// record counts one request's outcome.
func (w *workerStats) record(req *Request, code string, class int, err error, t Timed) {
	w.timed = append(w.timed, t)
	for _, p := range req.Parts {
		w.bytes += int64(len(p))
	}
	w.spans += req.Spans
	if req.Kept {
		w.kept += req.Spans
	}
	if class == classOK {
		w.ok = append(w.ok, t.Took)
		w.acked += req.Spans
		if req.Kept {
			w.keptOK += req.Spans
		}
	}
	*w.status.byClass(class)++
	if code == "" {
		code = "transport"
	}
	w.status.Codes[code]++
	if err != nil && len(w.errs) < 3 {
		w.errs = append(w.errs, err.Error())
	}
}

// byClass is the count of an outcome class; a class it does not know counts as a transport error.
func (c *StatusCounts) byClass(class int) *int {
	counts := [...]*int{classOK: &c.OK, classTooMany: &c.TooMany, classServer: &c.Server, classOther: &c.Other, classTransport: &c.Transport}
	if class < 0 || class >= len(counts) {
		return &c.Transport
	}
	return counts[class]
}

// missed are the requests a fixed-rate run with a duration had due before its deadline beyond
// the sent ones, each waiting from when it was due until end (StatusCounts.Missed).
func (l *load) missed(sent int, end time.Time) []Timed {
	if l.c.Rate <= 0 || l.deadline.IsZero() {
		return nil
	}
	var out []Timed
	for k := int64(sent); ; k++ {
		due := l.dueAt(k)
		if !due.Before(l.deadline) {
			return out
		}
		out = append(out, Timed{Due: due.Sub(l.start), Took: end.Sub(due)})
	}
}

// result sums the workers' counts into the run's Result, the missed requests in its latencies.
func (l *load) result(workers []workerStats, end time.Time) *Result {
	c := l.c
	out := &Result{
		Protocol: c.Protocol, Target: c.Target, Concurrency: c.Concurrency, SpansPerRequest: c.Spans, Rate: c.Rate,
		KeepFraction: c.KeepFraction, Start: l.start, End: end, ElapsedSeconds: end.Sub(l.start).Seconds(), Datakit: c.Datakit,
	}
	if h, ok := l.snd.(*httpSender); ok {
		out.Path = h.path
	}
	var timed []Timed
	for _, w := range workers {
		timed = append(timed, w.timed...)
	}
	sent := len(timed)
	timed = append(timed, l.missed(sent, end)...)
	all := make([]time.Duration, len(timed)) // the missed requests too
	for i, t := range timed {
		all[i] = t.Took
	}
	ok := out.addWorkers(workers)
	out.Requests = sent
	out.Status.Missed = len(timed) - sent
	out.Latency = Summarize(all)
	out.LatencyOK = Summarize(ok)
	out.Timeline = Timeline(timed)
	if out.Requests > 0 {
		out.BytesPerRequest = float64(out.Bytes) / float64(out.Requests)
	}
	if out.ElapsedSeconds > 0 {
		out.RequestsPerSec = float64(out.Requests) / out.ElapsedSeconds
		out.SpansPerSec = float64(out.SpansSent) / out.ElapsedSeconds
	}
	return out
}

// addWorkers sums the workers' counts into r, keeps the first five distinct errors, and returns the 2xx
// requests' latencies.
func (r *Result) addWorkers(workers []workerStats) []time.Duration {
	var ok []time.Duration
	seen := map[string]bool{}
	r.Status.Codes = map[string]int{}
	for _, w := range workers {
		ok = append(ok, w.ok...)
		r.Status.add(w.status)
		r.Bytes += w.bytes
		r.SpansSent += w.spans
		r.SpansAcked += w.acked
		r.SpansKept += w.kept
		r.SpansKeptAcked += w.keptOK
		for _, e := range w.errs {
			if !seen[e] && len(r.Errors) < 5 {
				seen[e] = true
				r.Errors = append(r.Errors, e)
			}
		}
	}
	return ok
}
