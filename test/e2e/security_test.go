package e2e

// Security through the built binary: TLS on every TCP receiver and towards
// Elasticsearch with certificates generated here, optional client authentication with the
// bearertokenauth and basicauth extensions (secrets from the environment), and pprof/zpages bound
// to localhost in every shipped config.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
)

// testPKI is a CA and a server certificate for 127.0.0.1, generated per test.
type testPKI struct {
	caFile, certFile, keyFile string
	pool                      *x509.CertPool
	cert                      tls.Certificate
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tracegate test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	p := testPKI{
		caFile: filepath.Join(dir, "ca.pem"), certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem"),
		pool: x509.NewCertPool(),
	}
	p.pool.AddCert(ca)
	for f, b := range map[string][]byte{
		p.caFile:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		p.certFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		p.keyFile:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if p.cert, err = tls.LoadX509KeyPair(p.certFile, p.keyFile); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestTLSAndClientAuth runs tracegate (durable.yaml) with TLS on every TCP receiver, bearer-token
// authentication on OTLP (HTTP and gRPC), basic authentication on Zipkin, and Elasticsearch over
// HTTPS with a private CA. Secrets come from the environment only.
func TestTLSAndClientAuth(t *testing.T) {
	pki := newTestPKI(t)
	// Elasticsearch over TLS: the stand-in's handler behind httptest's TLS server.
	es, err := esstandin.New(esstandin.Options{KeepDocuments: true})
	if err != nil {
		t.Fatal(err)
	}
	tlsES := httptest.NewUnstartedServer(es.Handler())
	tlsES.TLS = &tls.Config{Certificates: []tls.Certificate{pki.cert}}
	tlsES.StartTLS()
	t.Cleanup(tlsES.Close)

	const token, user, password = "s3cret-token-for-tests", "agent", "pa55-for-tests"
	sum := sha1.Sum([]byte(password))
	t.Setenv("TRACEGATE_TEST_BEARER_TOKEN", token)
	t.Setenv("TRACEGATE_TEST_HTPASSWD", user+":{SHA}"+base64.StdEncoding.EncodeToString(sum[:]))

	serverTLS := map[string]any{"cert_file": pki.certFile, "key_file": pki.keyFile, "min_version": "1.2"}
	bearer := map[string]any{"authenticator": "bearertokenauth"}
	overlay := overlayFile(t, map[string]any{
		"extensions": map[string]any{
			"bearertokenauth":  map[string]any{"token": "${env:TRACEGATE_TEST_BEARER_TOKEN}"},
			"basicauth/server": map[string]any{"htpasswd": map[string]any{"inline": "${env:TRACEGATE_TEST_HTPASSWD}"}},
		},
		"receivers": map[string]any{
			"otlp": map[string]any{"protocols": map[string]any{
				"grpc": map[string]any{"tls": serverTLS, "auth": bearer},
				"http": map[string]any{"tls": serverTLS, "auth": bearer},
			}},
			"zipkin":     map[string]any{"tls": serverTLS, "auth": map[string]any{"authenticator": "basicauth/server"}},
			"jaeger":     map[string]any{"protocols": map[string]any{"thrift_http": map[string]any{"tls": serverTLS}, "grpc": map[string]any{"tls": serverTLS}}},
			"ddtrace":    map[string]any{"tls": serverTLS},
			"elasticapm": map[string]any{"tls": serverTLS, "auth": bearer}, // APM agents' secret token
		},
		// Both exporters (logs and metrics; spans) to the HTTPS cluster.
		"exporters": map[string]any{
			"elasticsearch":           map[string]any{"endpoints": []string{tlsES.URL}},
			"elasticsearch_documents": map[string]any{"endpoints": []string{tlsES.URL}},
		},
		"service": map[string]any{"extensions": []string{"health_check", "pprof", "zpages", "bearertokenauth", "basicauth/server"}},
	})
	// The cluster's own CA through the configs' ELASTICSEARCH_CA_FILE, as a user would give it.
	g := startGatewayWith(t, gatewayOptions{config: "durable.yaml", overlays: []string{overlay}, env: []string{"ELASTICSEARCH_CA_FILE=" + pki.caFile}})

	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.pool}}}
	post := func(url, ct string, body []byte, hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Logf("POST %s: %v", url, err)
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	wrongBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":wrong"))
	otlpURL := "https://" + g.endpoints.OTLPHTTP + "/v1/traces"
	zipURL := "https://" + g.endpoints.Zipkin + "/api/v2/spans"
	apmURL := "https://" + g.endpoints.ElasticAPM + "/intake/v2/events"
	for _, c := range []struct {
		name   string
		status int
		want   int
	}{
		{"otlp-http no token", post(otlpURL, "application/x-protobuf", validOTLP("tls-otlp-http", "n"), nil), 401},
		{"otlp-http wrong token", post(otlpURL, "application/x-protobuf", validOTLP("tls-otlp-http", "n"), map[string]string{"Authorization": "Bearer nope"}), 401},
		{"otlp-http token", post(otlpURL, "application/x-protobuf", validOTLP("tls-otlp-http", "n"), map[string]string{"Authorization": "Bearer " + token}), 200},
		{"zipkin no credentials", post(zipURL, "application/json", validZipkinJSON("tls-zipkin", "n"), nil), 401},
		{"zipkin wrong password", post(zipURL, "application/json", validZipkinJSON("tls-zipkin", "n"), map[string]string{"Authorization": wrongBasic}), 401},
		{"zipkin basic auth", post(zipURL, "application/json", validZipkinJSON("tls-zipkin", "n"), map[string]string{"Authorization": basic}), 202},
		{"jaeger thrift https", post("https://"+g.endpoints.JaegerHTTP+"/api/traces", "application/x-thrift", validJaeger(t, "tls-jaeger", "n"), nil), 202},
		{"ddtrace https", post("https://"+g.endpoints.DDTrace+"/v0.4/traces", "application/msgpack", validDDv04("tls-dd", "n"), nil), 200},
		{"elasticapm no token", post(apmURL, "application/x-ndjson", validIntake("tls-apm"), nil), 401},
		{"elasticapm wrong token", post(apmURL, "application/x-ndjson", validIntake("tls-apm"), map[string]string{"Authorization": "Bearer nope"}), 401},
		{"elasticapm secret token", post(apmURL, "application/x-ndjson", validIntake("tls-apm"), map[string]string{"Authorization": "Bearer " + token}), 202},
	} {
		if c.status != c.want {
			t.Errorf("%s: status %d, want %d", c.name, c.status, c.want)
		}
	}
	// Plain HTTP to a TLS port is refused.
	for _, ep := range []string{g.endpoints.OTLPHTTP, g.endpoints.Zipkin, g.endpoints.JaegerHTTP, g.endpoints.DDTrace, g.endpoints.ElasticAPM} {
		resp, err := http.Post("http://"+ep+"/", "application/json", strings.NewReader("{}"))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("plain HTTP to %s: %d, want 400 or a closed connection", ep, resp.StatusCode)
			}
		}
	}

	// OTLP/gRPC over TLS with and without the token.
	conn, err := grpc.NewClient(g.endpoints.OTLPGRPC, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pki.pool})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	gc := ptraceotlp.NewGRPCClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(validOTLP("tls-otlp-grpc", "n")); err != nil {
		t.Fatal(err)
	}
	if _, err := gc.Export(ctx, req); err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("gRPC without a token: %v, want Unauthenticated", err)
	}
	if _, err := gc.Export(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token), req); err != nil {
		t.Errorf("gRPC with the token: %v", err)
	}

	// Every accepted span reached Elasticsearch over HTTPS; the refused ones did not.
	want := map[string]int{"tls-otlp-http": 1, "tls-otlp-grpc": 1, "tls-zipkin": 1, "tls-jaeger": 1, "tls-dd": 1}
	err = es.WaitUntil(ctx, func(st esstandin.Stats) bool {
		for svc, n := range want {
			if st.SpansByService[svc] < n {
				return false
			}
		}
		return true
	})
	st := es.Stats()
	if err != nil {
		t.Errorf("spans over TLS: %v; stand-in has %v", err, st.SpansByService)
	}
	// Once tracegate has flushed and exited, nothing refused can still arrive.
	g.stopAndFlush(t)
	for svc, n := range want {
		if got := es.Stats().SpansByService[svc]; got != n {
			t.Errorf("%s: %d spans in Elasticsearch, want %d (refused requests must not arrive)", svc, got, n)
		}
	}
	if g.es.Stats().BulkRequests != 0 {
		t.Errorf("the plain-HTTP stand-in got %d bulks: the exporter did not use the HTTPS endpoint", g.es.Stats().BulkRequests)
	}
	// The secrets are not in the log.
	if log := g.proc.Log(); strings.Contains(log, token) || strings.Contains(log, password) {
		t.Errorf("a secret appears in tracegate's log")
	}
}

// TestDebugEndpointsLocalhostOnly: in every shipped config, pprof and zpages listen on localhost
// only (they expose heap dumps, goroutine stacks and internal state).
func TestDebugEndpointsLocalhostOnly(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot, "configs", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join(repoRoot, "configs", "*", "*.yaml"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Fatal("no configs found")
	}
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Extensions map[string]map[string]any `yaml:"extensions"`
		}
		if err := yaml.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for id, ext := range cfg.Extensions {
			typ, _, _ := strings.Cut(id, "/")
			if typ != "pprof" && typ != "zpages" {
				continue
			}
			checked++
			ep, _ := ext["endpoint"].(string)
			host, _, err := net.SplitHostPort(ep)
			if err != nil || (host != "localhost" && host != "127.0.0.1" && host != "::1") {
				t.Errorf("%s: extensions.%s.endpoint = %q, want localhost, 127.0.0.1 or ::1", filepath.Base(f), id, ep)
			}
		}
	}
	if checked < 4 {
		t.Errorf("checked %d pprof/zpages endpoints, want at least 4 (default.yaml and durable.yaml)", checked)
	}
}
