package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/encoding/protowire"
)

// The Kafka tier of configs/kafka/: what a sweep variant's kafka: runs (variant.Kafka).
const (
	// kafkaAgent measures the agent tier (configs/kafka/agent.yaml on the mode's configuration):
	// clients to Kafka, its spans counted in the spans topic.
	kafkaAgent = "agent"
	// kafkaGateway measures the gateway tier (configs/kafka/gateway.yaml) alone: an agent takes
	// the load into Kafka first and stops, unmeasured; then the gateway drains Kafka into the
	// stand-in on the collector's CPU.
	kafkaGateway = "gateway"
	// kafkaTiers measures the agent with a gateway behind it (not pinned), clients to the
	// stand-in: the delivery through Kafka.
	kafkaTiers = "tiers"

	agentOverlay   = "configs/kafka/agent.yaml"
	gatewayOverlay = "configs/kafka/gateway.yaml"
	// spansTopic is the topic the overlays write spans to and read them from (contrib's default).
	spansTopic = "otlp_spans"
	// sinkKafka is run.Sink for an agent: its spans counted in spansTopic.
	sinkKafka = "kafka"
)

// kafkaTopics are the topics of configs/kafka/*.yaml, created when the broker starts.
var kafkaTopics = []string{spansTopic, "otlp_logs", "otlp_metrics"}

// startKafka starts franz-go's in-process Kafka (kfake) with the tiers' topics, four partitions
// each, as the end-to-end tests do. It runs in this process, on the client's CPU.
func startKafka() (*kfake.Cluster, error) {
	return kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, kafkaTopics...))
}

// spanCounter counts the spans of the OTLP records of a topic, read from its start: the sink of
// an agent's run.
type spanCounter struct {
	client *kgo.Client
	stop   context.CancelFunc
	done   chan struct{}

	mu sync.Mutex
	// total counts every span read, base those read before the last Reset.
	total, base int
	// undecodable counts records that are no OTLP traces.
	undecodable int
	changed     chan struct{} // closed and replaced whenever spans are counted
}

// newSpanCounter reads topic until Close or the end of ctx.
func newSpanCounter(ctx context.Context, brokers []string, topic string) (*spanCounter, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	c := &spanCounter{client: cl, stop: stop, done: make(chan struct{}), changed: make(chan struct{})}
	go c.consume(ctx)
	return c, nil
}

func (c *spanCounter) consume(ctx context.Context) {
	defer close(c.done)
	for {
		fs := c.client.PollFetches(ctx)
		if fs.IsClientClosed() || ctx.Err() != nil {
			return
		}
		spans, bad := 0, 0
		fs.EachRecord(func(r *kgo.Record) {
			n, err := otlpSpans(r.Value)
			if err != nil {
				bad++
			}
			spans += n
		})
		if spans+bad == 0 {
			continue
		}
		c.mu.Lock()
		c.total += spans
		c.undecodable += bad
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
}

// spans is what was counted since the last Reset.
func (c *spanCounter) spans() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total - c.base
}

// Reset starts the count again from zero.
func (c *spanCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base = c.total
}

// WaitForSpans blocks until n spans were counted since the last Reset, or ctx ends.
func (c *spanCounter) WaitForSpans(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		got, changed, bad := c.total-c.base, c.changed, c.undecodable
		c.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if bad > 0 {
				return fmt.Errorf("%w (%d records were no OTLP traces)", ctx.Err(), bad)
			}
			return ctx.Err()
		}
	}
}

// Close stops reading.
func (c *spanCounter) Close() {
	c.stop()
	<-c.done
	c.client.Close()
}

// otlpSpans counts the spans of an OTLP TracesData message (the Kafka exporter's otlp_proto
// encoding of traces) by walking its wire format, resource_spans (1) → scope_spans (2) → spans
// (2), without decoding the spans: reading the topic must cost the client's CPU little.
func otlpSpans(b []byte) (int, error) {
	return countNested(b, []protowire.Number{1, 2, 2})
}

// countNested counts the occurrences of the length-delimited field path[len(path)-1] inside the
// fields before it, in the protobuf message b.
func countNested(b []byte, path []protowire.Number) (int, error) {
	n := 0
	for len(b) > 0 {
		num, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return 0, protowire.ParseError(l)
		}
		b = b[l:]
		if num != path[0] || typ != protowire.BytesType {
			if l = protowire.ConsumeFieldValue(num, typ, b); l < 0 {
				return 0, protowire.ParseError(l)
			}
			b = b[l:]
			continue
		}
		v, l := protowire.ConsumeBytes(b)
		if l < 0 {
			return 0, protowire.ParseError(l)
		}
		b = b[l:]
		if len(path) == 1 {
			n++
			continue
		}
		m, err := countNested(v, path[1:])
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}
