package cpubench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// ServeFakeES is the body of the child's TestFakeElasticsearchProcess: it serves FakeESHandler,
// prints its URL and exits when the parent closes stdin. In a test binary not started by
// StartFakeES it skips.
func ServeFakeES(t *testing.T) {
	if os.Getenv(fakeESEnv) != "1" {
		t.Skip("the fake Elasticsearch of the CPU benchmarks, run only as their child process")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: FakeESHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin) // the parent closes stdin when it is done
	os.Exit(0)                           // no goleak report for the serving goroutines
}

// FakeESHandler answers like Elasticsearch 8 for what the exporter calls: GET / (version) and
// POST /_bulk (gzip or not), with the X-Elastic-Product header and one "created" item per
// document. It does not parse documents (internal/testbed/esstandin does, and would dominate the CPU).
func FakeESHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		w.Header().Set("Content-Type", "application/json")
		path := strings.Trim(r.URL.Path, "/")
		if path == "" {
			_, _ = io.WriteString(w, `{"name":"fake","cluster_name":"fake","cluster_uuid":"ZmFrZQ","version":{"number":"8.17.0","build_flavor":"default","minimum_wire_compatibility_version":"7.17.0","minimum_index_compatibility_version":"7.0.0"},"tagline":"You Know, for Search"}`)
			return
		}
		if !strings.HasSuffix(path, "_bulk") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":{"type":"illegal_argument_exception","reason":"fake: unsupported"},"status":400}`)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			body = zr
		}
		var out bytes.Buffer
		out.WriteString(`{"took":1,"errors":false,"items":[`)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		n := 0
		for sc.Scan() {
			line := sc.Bytes()
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			// An action line {"create":{...}} or {"index":{...}}; the next line is its document.
			action := "create"
			if i := bytes.IndexByte(line, '"'); i >= 0 {
				if j := bytes.IndexByte(line[i+1:], '"'); j >= 0 {
					action = string(line[i+1 : i+1+j])
				}
			}
			if action != "delete" && !sc.Scan() {
				break
			}
			if n > 0 {
				out.WriteByte(',')
			}
			fmt.Fprintf(&out, `{%q:{"_index":"traces","_id":"%d","_version":1,"result":"created","status":201}}`, action, n)
			n++
		}
		out.WriteString(`]}`)
		_, _ = w.Write(out.Bytes())
	})
}
