package e2e

// The classic APM overlay with Elasticsearch down for 30 s under a steady OTLP load of several
// services (the load of TestAPMOutageUnderLoad):
//
//   - every span tracegate acknowledged arrives in traces-apm-default exactly once;
//   - the metricsets of the windows that end during the outage are written into the buffer while
//     Elasticsearch is down and arrive after the recovery;
//   - no metricset arrives twice (8.x's APM metric data streams are not time series: the
//     connector's deterministic ids make a copy a 409), and the service_transaction documents
//     count, per service, every transaction that reached the connector, once.
//
// The test adds a 10 s interval to the overlay's 1m, 10m and 60m, so that three windows end
// inside the outage whatever the clock; the 1m, 10m and 60m windows take the same path.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAPMClassicOutage(t *testing.T) {
	t.Parallel()
	g := startGatewayWith(t, gatewayOptions{
		config: "default.yaml", overlays: []string{"elasticsearch/apm-classic.yaml"}, esVersion: "8.13.4",
		beforeRun:   putAPMTemplates,
		extraConfig: "connectors:\n  apmdocs:\n    aggregation:\n      intervals: [10s, 1m, 10m, 60m]\n      delay: 2s\n",
	})
	ctx := t.Context()
	id := newTestID()[:8]
	var services []string
	for i := range apmOutageServices {
		services = append(services, fmt.Sprintf("classic-outage-%s-%d", id, i))
	}
	load := newAPMOutageLoad(g.endpoints.OTLPHTTP, services)
	loadCtx, cancelLoad := context.WithTimeout(ctx, apmOutageBefore+apmOutageLength+apmOutageAfter)
	defer cancelLoad()
	resendCtx, cancelResend := context.WithTimeout(ctx, apmOutageBefore+apmOutageLength+apmOutageAfter+apmOutageResend)
	defer cancelResend()
	began := time.Now()
	var wg sync.WaitGroup
	for _, s := range services {
		wg.Go(func() { load.sendAs(loadCtx, resendCtx, s) })
	}
	time.Sleep(time.Until(began.Add(apmOutageBefore)))
	if err := g.es.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	time.Sleep(apmOutageLength)
	if err := g.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	wg.Wait()
	loadEnded := time.Now()

	// Every acknowledged span, and the metricsets of every 10 s window up to the load's end.
	// The last requests were sent within one interval of the load's end.
	lastWindow := loadEnded.Add(-2 * apmOutageInterval).Truncate(10 * time.Second)
	waitCtx, cancelWait := context.WithTimeout(ctx, 60*time.Second)
	defer cancelWait()
	var spans map[string]int
	var sets map[string][]classicDoc
	complete := func(docs []classicDoc) bool {
		spans, sets = classicOutageDocs(docs, services)
		load.mu.Lock()
		defer load.mu.Unlock()
		for sid := range load.acked {
			if spans[sid] == 0 {
				return false
			}
		}
		for _, s := range services {
			if latestWindow(sets[s+" service_transaction.10s"]).Before(lastWindow) {
				return false
			}
		}
		return true
	}
	waitForClassic(waitCtx, t, g.es, complete)
	t.Logf("load %s - %s, Elasticsearch down %s - %s", began.Format("15:04:05.000"), loadEnded.Format("15:04:05.000"),
		down.Format("15:04:05.000"), up.Format("15:04:05.000"))

	load.mu.Lock()
	defer load.mu.Unlock()
	missing, twice := 0, 0
	for sid := range load.acked {
		if spans[sid] == 0 {
			missing++
		}
	}
	for _, n := range spans {
		if n > 1 {
			twice++
		}
	}
	if missing > 0 || twice > 0 {
		t.Errorf("of %d acknowledged spans, %d never arrived; %d span ids arrived more than once", len(load.acked), missing, twice)
	}
	for _, s := range services {
		c := load.perSvc[s]
		docs := sets[s+" service_transaction.10s"]
		counted, outageWindows := 0.0, 0
		seen := map[string]bool{}
		for _, d := range docs {
			n, _ := d.get("_doc_count")
			counted += n.(float64)
			key := d.str("@timestamp") + " " + d.str("transaction.type")
			if seen[key] {
				t.Errorf("%s: two service_transaction documents of the window %s", s, key)
			}
			seen[key] = true
			if at, err := time.Parse(time.RFC3339Nano, d.str("@timestamp")); err == nil &&
				!at.Add(10*time.Second).Before(down) && at.Add(10*time.Second).Before(up) {
				outageWindows++
			}
		}
		// Each request is one transaction; a request the buffer refused (429) was counted before
		// the refusal and again when resent.
		if want := float64(c.accepted + c.refused429); counted != want {
			t.Errorf("%s: service_transaction counts %v transactions, want %v (%d accepted, %d refused by the buffer)",
				s, counted, want, c.accepted, c.refused429)
		}
		if outageWindows < 2 {
			t.Errorf("%s: %d service_transaction windows that ended during the outage arrived, want at least 2", s, outageWindows)
		}
	}
	// A replayed delivery: a metricset of the outage again, with its id, is refused with 409.
	replayed := false
	for _, d := range g.es.Documents() {
		if strings.HasPrefix(d.Index, "metrics-apm.service_transaction.10s") && strings.Contains(string(d.Source), services[0]) {
			if status := bulkCreateID(t, g.es.URL(), d.Index, d.ID, d.Source); status != http.StatusConflict {
				t.Errorf("a metricset sent again with its id %q answered %d, want 409", d.ID, status)
			}
			replayed = true
			break
		}
	}
	if !replayed {
		t.Error("no service_transaction metricset to send again")
	}
	if t.Failed() {
		t.Logf("statuses %v, transport errors %d, given up %d", load.statuses, load.transport, load.given)
	}
}

// classicOutageDocs counts the span documents by span id and groups the services' 10 s
// metricsets by "<service> <set>.10s".
func classicOutageDocs(docs []classicDoc, services []string) (map[string]int, map[string][]classicDoc) {
	ours := map[string]bool{}
	for _, s := range services {
		ours[s] = true
	}
	spans := map[string]int{}
	sets := map[string][]classicDoc{}
	for _, d := range docs {
		if !ours[d.str("service.name")] {
			continue
		}
		switch {
		case strings.HasPrefix(d.index, "traces-apm"):
			spans[d.str("span.id")]++
		case strings.HasPrefix(d.index, "metrics-apm.") && strings.Contains(d.index, ".10s-"):
			set := strings.TrimSuffix(strings.TrimPrefix(d.index, "metrics-apm."), "-default")
			sets[d.str("service.name")+" "+set] = append(sets[d.str("service.name")+" "+set], d)
		}
	}
	return spans, sets
}

// latestWindow is the start of the newest window among metricset documents.
func latestWindow(docs []classicDoc) time.Time {
	var latest time.Time
	for _, d := range docs {
		var at time.Time
		if b, err := json.Marshal(d.str("@timestamp")); err == nil && json.Unmarshal(b, &at) == nil && at.After(latest) {
			latest = at
		}
	}
	return latest
}
