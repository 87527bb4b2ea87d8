package e2e

// Hostile input on the gRPC receivers: one connection opening streams that never finish.
// gRPC-Go accepts 2^32 concurrent streams per connection unless told otherwise; configs/ set
// max_concurrent_streams, and this test proves the server advertises and enforces it.

import (
	"bytes"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// grpcStreamLimit is max_concurrent_streams in configs/default.yaml and durable.yaml.
const grpcStreamLimit = 100

// streamFlood is what one connection saw after opening streams that never end.
type streamFlood struct {
	advertised uint32 // SETTINGS_MAX_CONCURRENT_STREAMS (0: not sent, i.e. unlimited)
	refused    int    // RST_STREAM REFUSED_STREAM frames received
	goAway     bool
}

// floodStreams opens n gRPC streams on one h2c connection, each with headers and the first 10
// bytes of a message that claims 1 MiB, and never finishes them; it then reads what the server
// answers for a while. A client that ignores the advertised limit is what a hostile one does.
func floodStreams(t *testing.T, addr, path string, n int) streamFlood {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	var res streamFlood
	// The server's first frame is its SETTINGS.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatalf("reading the server's settings: %v", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok {
		t.Fatalf("first frame from the server is %T, not SETTINGS", f)
	}
	if v, ok := sf.Value(http2.SettingMaxConcurrentStreams); ok {
		res.advertised = v
	}
	if err := fr.WriteSettingsAck(); err != nil {
		t.Fatal(err)
	}

	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, h := range [][2]string{
		{":method", "POST"},
		{":scheme", "http"},
		{":path", path},
		{":authority", addr},
		{"content-type", "application/grpc"},
		{"te", "trailers"},
	} {
		_ = enc.WriteField(hpack.HeaderField{Name: h[0], Value: h[1]})
	}
	partial := append(grpcFrame(nil, 1<<20), make([]byte, 5)...)
	for i := range n {
		id := uint32(2*i + 1)
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true}); err != nil {
			t.Fatalf("stream %d: %v", id, err)
		}
		if err := fr.WriteData(id, false, partial); err != nil {
			t.Fatalf("stream %d: %v", id, err)
		}
	}

	// Read until every stream beyond the advertised limit was refused, the server closed the
	// connection, or 30 s passed: a deadline for a server that never answers, not a
	// quiet period a slow server could exceed before its last RST_STREAM.
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for res.advertised == 0 || res.refused < n-int(res.advertised) {
		f, err := fr.ReadFrame()
		if err != nil {
			return res
		}
		switch f := f.(type) {
		case *http2.RSTStreamFrame:
			if f.ErrCode == http2.ErrCodeRefusedStream {
				res.refused++
			}
		case *http2.GoAwayFrame:
			res.goAway = true // the server closes the connection after it: ReadFrame ends the loop
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		}
	}
	// A few more frames may follow (a refusal too many would show): read what arrives soon.
	_ = conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return res
		}
		if r, ok := f.(*http2.RSTStreamFrame); ok && r.ErrCode == http2.ErrCodeRefusedStream {
			res.refused++
		}
	}
}

// TestGRPCStreamLimit: on the OTLP and Jaeger gRPC receivers one connection holds at most
// max_concurrent_streams unfinished streams; the rest are refused, and tracegate goes on serving.
func TestGRPCStreamLimit(t *testing.T) {
	g := startGateway(t, "default.yaml")
	receivers := []struct{ name, addr, path string }{
		{"otlp", g.endpoints.OTLPGRPC, "/opentelemetry.proto.collector.trace.v1.TraceService/Export"},
		{"jaeger", g.jaegerGRPC, "/jaeger.api_v2.CollectorService/PostSpans"},
	}
	const opened = 3 * grpcStreamLimit
	for _, r := range receivers {
		t.Run(r.name, func(t *testing.T) {
			res := floodStreams(t, r.addr, r.path, opened)
			t.Logf("%s: advertised max_concurrent_streams %d; %d of %d unfinished streams refused; GOAWAY %v",
				r.name, res.advertised, res.refused, opened, res.goAway)
			if res.advertised != grpcStreamLimit {
				t.Errorf("server advertises max_concurrent_streams %d, want %d", res.advertised, grpcStreamLimit)
			}
			if want := opened - grpcStreamLimit; res.refused != want {
				t.Errorf("%d streams refused, want %d (all beyond the limit)", res.refused, want)
			}
		})
	}
	checkStillServing(t, g, "after-stream-flood")
}
