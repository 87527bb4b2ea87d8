package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func TestDatakitPath(t *testing.T) {
	for _, tt := range []struct {
		protocol, want string
	}{
		{DDTraceV04, "/v0.4/traces"},
		{DDTraceV05, "/v0.5/traces"},
		{JaegerThriftHTTP, "/apis/traces"},
		{ZipkinJSON, "/api/v2/spans"},
		{ZipkinProto, "/api/v2/spans"},
		{OTLPHTTP, "/otel/v1/traces"},
		{OTLPGRPC, ""},
		{JaegerUDPCompact, ""},
		{ElasticAPMIntake, ""},
	} {
		got, err := DatakitPath(tt.protocol)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("DatakitPath(%s) = %q, %v; want %q", tt.protocol, got, err, tt.want)
		}
	}
}

// TestRunToDatakitPaths: with Datakit set, each protocol's requests carry the same body, method
// and media type as to its own receiver, at Datakit's path instead.
func TestRunToDatakitPaths(t *testing.T) {
	type seen struct{ method, path, contentType, body string }
	var mu sync.Mutex
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), string(b)})
		mu.Unlock()
	}))
	defer srv.Close()
	target := strings.TrimPrefix(srv.URL, "http://")
	for _, tt := range []struct {
		protocol, wantPath, wantMethod string
	}{
		{DDTraceV04, "/v0.4/traces", http.MethodPut},
		{JaegerThriftHTTP, "/apis/traces", http.MethodPost},
		{ZipkinJSON, "/api/v2/spans", http.MethodPost},
		{OTLPHTTP, "/otel/v1/traces", http.MethodPost},
	} {
		t.Run(tt.protocol, func(t *testing.T) {
			var bodies [2]string
			for i, datakit := range []bool{false, true} {
				mu.Lock()
				got = nil
				mu.Unlock()
				res, err := Run(context.Background(), Config{Protocol: tt.protocol, Target: target, Datakit: datakit, Concurrency: 1, Requests: 1, Spans: 3, Seed: 7})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || res.Status.OK != 1 {
					t.Fatalf("datakit %v: %d requests seen, %d acknowledged; want 1", datakit, len(got), res.Status.OK)
				}
				s := got[0]
				bodies[i] = s.body
				if s.method != tt.wantMethod || s.contentType != contentType(tt.protocol) {
					t.Errorf("datakit %v: %s with %q, want %s with %q", datakit, s.method, s.contentType, tt.wantMethod, contentType(tt.protocol))
				}
				wantPath := path(tt.protocol)
				if datakit {
					wantPath = tt.wantPath
				}
				if s.path != wantPath || res.Path != wantPath || res.Datakit != datakit {
					t.Errorf("datakit %v: sent to %s (result: %s, datakit %v), want %s", datakit, s.path, res.Path, res.Datakit, wantPath)
				}
			}
			// The same trace (seed and request number), encoded alike: only the start times, taken
			// from the clock when the pool is built, may differ.
			own, dk := decode(t, tt.protocol, [][]byte{[]byte(bodies[0])}), decode(t, tt.protocol, [][]byte{[]byte(bodies[1])})
			if !reflect.DeepEqual(own, dk) || len(own) != 3 {
				t.Errorf("the Datakit request carries other spans than the receiver's:\n%+v\n%+v", dk, own)
			}
		})
	}
}

// TestRunToDatakitRefusesOtherProtocols: a protocol Datakit's port does not take is refused
// before anything is sent.
func TestRunToDatakitRefusesOtherProtocols(t *testing.T) {
	for _, p := range []string{OTLPGRPC, JaegerUDPCompact, ElasticAPMIntake} {
		if _, err := Run(context.Background(), Config{Protocol: p, Target: "127.0.0.1:1", Datakit: true, Requests: 1}); err == nil || !strings.Contains(err.Error(), "no Datakit path") {
			t.Errorf("%s to Datakit's port: %v", p, err)
		}
	}
}
