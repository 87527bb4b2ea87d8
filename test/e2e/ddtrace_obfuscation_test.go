package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// ddSQLSent is the output line of test/ddclients/cmd/ddgo-sql.
type ddSQLSent struct {
	TraceID      string `json:"trace_id"`
	ServerSpanID string `json:"server_span_id"`
	DBSpanID     string `json:"db_span_id"`
}

// TestDDTraceObfuscation runs dd-trace-go v2 sending a database span whose statement holds an
// e-mail address through the binary: with the default configuration no stored document holds the
// address, and the database span's resource.name and db.query.text hold the statement with "?" in
// its place; with the receiver's obfuscation off, the address is stored (so the search for it does
// find it where it is).
func TestDDTraceObfuscation(t *testing.T) {
	const (
		statement  = "SELECT * FROM users WHERE email = 'alice@example.com'"
		obfuscated = "SELECT * FROM users WHERE email = ?"
		literal    = "alice"
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildDDGoProgram(ctx, t, "ddgo-sql")
	for _, c := range []struct {
		name, extraConfig string
		wantLiteral       bool
	}{
		{"default", "", false},
		{"off", "receivers:\n  ddtrace:\n    obfuscation:\n      enabled: false\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := startGatewayWith(t, gatewayOptions{config: "default.yaml", extraConfig: c.extraConfig}) //nolint:contextcheck // the gateway belongs to the subtest (its t.Cleanup stops it)
			cmd := exec.CommandContext(ctx, bin, "-service", "e2e-ddgo-sql-"+c.name, "-query", statement)
			cmd.Dir = ddclientsDir
			cmd.Env = ddClientEnv("DD_TRACE_AGENT_URL=http://" + g.endpoints.DDTrace)
			sent := parseJSONLines[ddSQLSent](t, runDDProgram(t, cmd))
			if len(sent) != 1 || !hex64.MatchString(sent[0].DBSpanID) {
				t.Fatalf("ddgo-sql printed %+v, want one trace", sent)
			}
			docs := waitForObfuscationDocs(ctx, t, g, 2)

			var withLiteral int
			for _, d := range docs {
				if bytes.Contains(d.Source, []byte(literal)) {
					withLiteral++
					if !c.wantLiteral {
						t.Errorf("document in %s holds %q: %s", d.Index, literal, d.Source)
					}
				}
			}
			if c.wantLiteral && withLiteral == 0 {
				t.Errorf("obfuscation off: no document holds %q", literal)
			}
			want := obfuscated
			if c.wantLiteral {
				want = statement
			}
			checkDBStatement(t, docs, sent[0].DBSpanID, want)
		})
	}
}

// waitForObfuscationDocs waits for n documents, stops tracegate (so that nothing more can come)
// and returns every document stored.
func waitForObfuscationDocs(ctx context.Context, t *testing.T, g *gateway, n int) []esstandin.Document {
	t.Helper()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := g.es.WaitForDocuments(waitCtx, n); err != nil {
		t.Fatalf("%v; stand-in stats: %+v", err, g.es.Stats())
	}
	g.stopAndFlush(t)
	docs := g.es.Documents()
	if len(docs) != n {
		t.Errorf("%d documents, want %d", len(docs), n)
	}
	return docs
}

// checkDBStatement finds the database span's document and checks the statement in its
// resource.name and db.query.text.
func checkDBStatement(t *testing.T, docs []esstandin.Document, spanID, want string) {
	t.Helper()
	for _, d := range docs {
		var doc struct {
			SpanID     string         `json:"span_id"`
			Name       string         `json:"name"`
			Attributes map[string]any `json:"attributes"`
		}
		if err := json.Unmarshal(d.Source, &doc); err != nil {
			t.Fatalf("document %s in %s: %v", d.ID, d.Index, err)
		}
		if doc.SpanID != spanID {
			continue
		}
		for _, k := range []string{"resource.name", "db.query.text"} {
			if got := doc.Attributes[k]; got != want {
				t.Errorf("database span: %s = %#v, want %q", k, got, want)
			}
		}
		if doc.Name != "SELECT" {
			t.Errorf("database span: name %q, want SELECT", doc.Name)
		}
		return
	}
	t.Errorf("no document of the database span %s", spanID)
}
