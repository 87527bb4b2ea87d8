package e2e

// Helpers shared by the reliability, hostile-input and security tests (docs/reliability.md).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/esstandin"
	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

// procMem is a process's resident memory in bytes: now (VmRSS) and its peak so far (VmHWM).
type procMem struct{ RSS, HWM int64 }

func (m procMem) String() string {
	return fmt.Sprintf("RSS %d MiB, peak %d MiB", m.RSS>>20, m.HWM>>20)
}

// readProcMem reads VmRSS and VmHWM of pid from /proc.
func readProcMem(t *testing.T, pid int) procMem {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading memory of pid %d: %v", pid, err)
	}
	defer f.Close()
	var m procMem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			m.RSS = kb << 10
		case "VmHWM:":
			m.HWM = kb << 10
		}
	}
	return m
}

// memSampler polls a process's RSS every 200 ms and keeps the peak (VmHWM is kept by the kernel
// too; the sampler also sees a process that was restarted).
type memSampler struct {
	mu   sync.Mutex
	peak int64
	stop context.CancelFunc
	done chan struct{}
}

func sampleMem(t *testing.T, g *gateway) *memSampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &memSampler{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.proc.Pid())); err == nil {
				if m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(b); m != nil {
					kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
					s.mu.Lock()
					s.peak = max(s.peak, kb<<10)
					s.mu.Unlock()
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *memSampler) close() { s.stop(); <-s.done }

// Peak is the highest VmHWM seen so far, in bytes.
func (s *memSampler) Peak() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

// healthURL is the gateway's health check.
func (g *gateway) healthURL() string { return g.opts.HealthURL }

// metricsURL is the gateway's Prometheus endpoint.
func (g *gateway) metricsURL() string {
	return fmt.Sprintf("http://127.0.0.1:%d/metrics", g.listeners.MetricsPort)
}

// metricSum adds up every sample of the Prometheus metric name whose labels contain all of
// labelParts (e.g. `outcome="failed_client"`). 0 when absent.
func metricSum(t *testing.T, g *gateway, name string, labelParts ...string) float64 {
	t.Helper()
	resp, err := http.Get(g.metricsURL())
	if err != nil {
		t.Logf("metrics: %v", err)
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	sum := 0.0
	for line := range strings.SplitSeq(string(b), "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		ok := true
		for _, p := range labelParts {
			ok = ok && strings.Contains(line, p)
		}
		if !ok {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// checkStillServing asserts that the process is alive, its health check answers 200, and a
// normal request over every protocol is accepted and reaches Elasticsearch (so nothing before it
// left the pipeline stuck). service prefixes the service names so calls do not collide.
func checkStillServing(t *testing.T, g *gateway, service string) {
	t.Helper()
	if g.proc.Exited() {
		t.Fatalf("tracegate exited; log:\n%s", g.proc.Log())
	}
	resp, err := http.Get(g.healthURL())
	if err != nil {
		t.Fatalf("health check: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("health check: %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const n = 6
	want := map[string]int{}
	for _, p := range tracesend.Protocols() {
		svc := service + "-" + p.Name
		if _, err := p.Send(ctx, g.endpoints, svc, n); err != nil {
			t.Errorf("normal request over %s: %v", p.Name, err)
			continue
		}
		want[svc] = n
	}
	err = g.es.WaitUntil(ctx, func(st esstandin.Stats) bool {
		for svc, n := range want {
			if st.SpansByService[svc] < n {
				return false
			}
		}
		return true
	})
	if err != nil {
		st := g.es.Stats()
		for svc, n := range want {
			if st.SpansByService[svc] < n {
				t.Errorf("%s: %d of %d spans reached Elasticsearch", svc, st.SpansByService[svc], n)
			}
		}
	}
}

// overlayFile writes a config overlay (JSON is YAML) and returns its path relative to configs/,
// as gatewayOptions.overlays wants.
func overlayFile(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "overlay.yaml")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(filepath.Join(repoRoot, "configs"), p)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// statusCounts renders a status histogram in a stable order for logs and docs.
func statusCounts(m map[int]int, transport int) string {
	var parts []string
	for s := range 600 {
		if m[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d×%d", m[s], s))
		}
	}
	if transport > 0 {
		parts = append(parts, fmt.Sprintf("%d×transport-error", transport))
	}
	return strings.Join(parts, " ")
}
