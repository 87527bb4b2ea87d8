package e2e

// The Kafka tier through two tracegate processes: configs/kafka/agent.yaml (receivers → buffer →
// Kafka) and configs/kafka/gateway.yaml (Kafka → the usual pipeline → Elasticsearch), both on
// configs/durable.yaml, with franz-go's in-process Kafka (kfake, what contrib's own Kafka tests
// use) on loopback. Every span the agent acknowledged must reach Elasticsearch exactly once: when
// everything works, when the gateway is killed mid-stream, when Elasticsearch is down for 30 s and
// when the broker drops the agent's connections for a while.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/tracegate/tracegate/internal/testbed/tracesend"
)

// kafkaTopics are the topics of configs/kafka/*.yaml (contrib's defaults).
var kafkaTopics = []string{"otlp_spans", "otlp_logs", "otlp_metrics"}

// kafkaTiers is an agent and a gateway joined by one Kafka cluster.
type kafkaTiers struct {
	kafka          *kfake.Cluster
	agent, gateway *gateway
}

// startKafkaTiers starts kfake with the tiers' topics (4 partitions each), then a gateway and an
// agent on configs/durable.yaml with the Kafka overlays. Spans go to agent.endpoints and arrive in
// gateway.es.
func startKafkaTiers(t *testing.T) *kafkaTiers {
	const base = "durable.yaml"
	t.Helper()
	k, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, kafkaTopics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	env := []string{"KAFKA_BROKERS=" + strings.Join(k.ListenAddrs(), ",")}
	gw := startGatewayWith(t, gatewayOptions{config: base, overlays: []string{"kafka/gateway.yaml"}, env: env})
	agent := startGatewayWith(t, gatewayOptions{config: base, overlays: []string{"kafka/agent.yaml"}, env: env})
	return &kafkaTiers{kafka: k, agent: agent, gateway: gw}
}

// TestKafkaTiersDeliverOnce: spans of every HTTP protocol and OTLP log records sent to the agent
// arrive in Elasticsearch through Kafka, each once and intact, and the agent's own Elasticsearch
// sees nothing.
func TestKafkaTiersDeliverOnce(t *testing.T) {
	k := startKafkaTiers(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const perProtocol = 30
	var sent []tracesend.Span
	for _, p := range tracesend.Protocols() {
		if p.Name == "jaeger-udp-compact" {
			continue // UDP has no acknowledgement: nothing to promise
		}
		spans, err := p.Send(ctx, k.agent.endpoints, "kafka-"+p.Name, perProtocol)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		sent = append(sent, spans...)
	}
	logs := newSignalLoad(k.agent.endpoints.OTLPHTTP, logSignal)
	for range 5 {
		if status := logs.send(ctx, 20); status != 200 {
			t.Fatalf("log records: status %d", status)
		}
	}
	if err := k.gateway.es.WaitForSpans(ctx, len(sent)); err != nil {
		t.Fatalf("%v; gateway's stand-in: %+v; agent log:\n%s", err, k.gateway.es.Stats(), k.agent.proc.Log())
	}
	checkAllAckedArrived(t, k.gateway, logs, time.Minute)
	k.agent.stopAndFlush(t)
	k.gateway.stopAndFlush(t)
	checkArrivedOnce(t, k.gateway.es.Documents(), sent)
	if st := k.gateway.es.Stats(); st.DuplicateSpans != 0 || st.RejectedItems != 0 {
		t.Errorf("gateway's stand-in: %d duplicate spans, %d rejected items; want none", st.DuplicateSpans, st.RejectedItems)
	}
	if st := k.agent.es.Stats(); st.BulkRequests != 0 {
		t.Errorf("the agent wrote %d bulks to Elasticsearch; want none (everything goes to Kafka)", st.BulkRequests)
	}
}

// TestKafkaGatewayKilledMidStream: the gateway is SIGKILLed while spans stream through it, and
// started again. What it had taken but not committed is read again; what it had committed is in its
// write-ahead buffer. Every acknowledged span arrives once (copies are refused by their ids).
func TestKafkaGatewayKilledMidStream(t *testing.T) {
	k := startKafkaTiers(t)
	load := newOTLPLoad(k.agent.endpoints.OTLPHTTP)
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { load.run(ctx, 4, 50, 50*time.Millisecond) }) // ~4,000 spans/s
	// Kill once spans are arriving: the gateway is consuming, committing and delivering.
	if err := k.gateway.es.WaitForSpans(ctx, 2000); err != nil {
		t.Fatalf("before the kill: %v", err)
	}
	if err := k.gateway.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	k.gateway.start(t)
	wg.Wait()
	if dups := checkAllAckedArrived(t, k.gateway, load, 2*time.Minute); dups != 0 {
		t.Errorf("%d duplicate span documents; want none (a copy read again is refused by its id)", dups)
	}
	t.Logf("copies refused by the stand-in: %d (%v)", k.gateway.es.Stats().RejectedItems, k.gateway.es.Stats().RejectedReasons)
}

// TestKafkaElasticsearchDown: Elasticsearch refuses connections for 30 s under load. The gateway
// keeps reading, holds what it read in its buffer, and delivers it once Elasticsearch is back;
// the agent keeps acknowledging clients throughout.
func TestKafkaElasticsearchDown(t *testing.T) {
	// Mostly waiting through the outage: run beside the other waiting tests.
	t.Parallel()
	k := startKafkaTiers(t)
	if err := k.gateway.es.SetRefusing(true); err != nil {
		t.Fatal(err)
	}
	load := newOTLPLoad(k.agent.endpoints.OTLPHTTP)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	load.run(ctx, 2, 50, 100*time.Millisecond) // ~1,000 spans/s
	cancel()
	if n := len(k.gateway.es.Documents()); n != 0 {
		t.Fatalf("%d documents stored while Elasticsearch refused connections", n)
	}
	if err := k.gateway.es.SetRefusing(false); err != nil {
		t.Fatal(err)
	}
	checkAllAckedArrived(t, k.gateway, load, 2*time.Minute)
}

// TestKafkaBrokerUnavailable: for 5 s the broker closes every connection that tries to produce
// (what clients see while a broker restarts). The agent keeps acknowledging clients, its buffer
// holds the batches Kafka did not take, and delivers them once the broker answers again.
func TestKafkaBrokerUnavailable(t *testing.T) {
	k := startKafkaTiers(t)
	load := newOTLPLoad(k.agent.endpoints.OTLPHTTP)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { load.run(ctx, 4, 50, 50*time.Millisecond) })
	if err := k.gateway.es.WaitForSpans(ctx, 1000); err != nil {
		t.Fatalf("before the outage: %v", err)
	}
	var refused atomic.Int64
	until := time.Now().Add(5 * time.Second)
	k.kafka.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		if time.Now().After(until) {
			k.kafka.DropControl()
			return nil, nil, false
		}
		k.kafka.KeepControl()
		refused.Add(1)
		return nil, errors.New("broker restarting"), true // closes the connection
	})
	wg.Wait()
	if refused.Load() == 0 {
		t.Fatal("no produce request reached the broker during its outage: the test showed nothing")
	}
	t.Logf("%d produce requests refused during the outage", refused.Load())
	if dups := checkAllAckedArrived(t, k.gateway, load, 2*time.Minute); dups != 0 {
		t.Errorf("%d duplicate span documents; want none", dups)
	}
}
