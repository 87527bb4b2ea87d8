package elasticapmreceiver

import (
	"bytes"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/metadatatest"
)

// FuzzDecode: any body (compressed or not) decodes and converts without a panic, within
// max_event_size per line, and every event is either converted or answered as an error.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{filepath.Join("internal", "convert", "testdata", "edot"), filepath.Join("testdata", "invalid")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.ndjson"))
		require.NoError(f, err)
		for _, name := range files {
			b, err := os.ReadFile(name)
			require.NoError(f, err)
			f.Add(b)
		}
	}
	f.Add([]byte(metadataLine + transactionLine("0000000000000001")))
	cfg := createDefaultConfig().(*Config)
	cfg.MaxEventSize = 64 << 10
	r, err := newReceiver(cfg, metadatatest.NewSettings(componenttest.NewTelemetry()))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, body []byte) {
		// The request path itself, its pooled buffers reused from one input to the next.
		res := newResult()
		bufs := r.buffers.get()
		defer r.buffers.put(bufs)
		in, err := r.readerOf(httptest.NewRecorder(), bytes.NewReader(body), bufs)
		if err != nil {
			return // answered 400 "data decoding error"
		}
		d := r.decode(context.Background(), in, res)
		converted := d.out.Events.Total()
		if converted != len(d.events) {
			t.Fatalf("%d events decoded, %d converted", len(d.events), converted)
		}
		if got := d.out.Traces.SpanCount(); got != d.out.Events[0]+d.out.Events[1] {
			t.Fatalf("%d spans for %v", got, d.out.Events)
		}
		if converted == 0 && res.status == 202 && len(bytes.TrimSpace(body)) > 0 && !bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{"metadata"`)) && !bytes.HasPrefix(bytes.TrimSpace(body), []byte(`{"m"`)) && utf8.Valid(body) {
			// A non-empty body that is not a metadata line must be refused.
			if _, err := io.ReadAll(bytes.NewReader(body)); err == nil && body[0] != 0x1f && body[0]&0x0f != 8 {
				t.Fatalf("body %q accepted without a metadata line", body)
			}
		}
	})
}

// FuzzUTF8Reader: what comes through is the input up to its first invalid byte, whatever the read
// sizes, and the error comes exactly when the input is not UTF-8.
func FuzzUTF8Reader(f *testing.F) {
	f.Add([]byte("héllo €"), uint8(1))
	f.Add([]byte("a\xffb"), uint8(3))
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		out, err := io.ReadAll(io.LimitReader(newUTF8Reader(&chunked{b: in, n: int(chunk%7) + 1}), int64(len(in))+1))
		want := in
		if i := firstInvalid(in); i >= 0 {
			want = in[:i]
			if err == nil {
				t.Fatalf("no error for invalid input %q", in)
			}
		} else if err != nil {
			t.Fatalf("error %v for valid input %q", err, in)
		}
		if !bytes.Equal(out, want) {
			t.Fatalf("got %q, want %q", out, want)
		}
	})
}

// chunked returns at most n bytes per Read.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.b)
	c.b = c.b[n:]
	return n, nil
}
