package apmmetricsconnector

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"

	"github.com/tracegate/tracegate/connector/apmmetricsconnector/internal/metadata"
)

// NewFactory returns the apmmetrics connector factory.
func NewFactory() connector.Factory {
	return connector.NewFactory(metadata.Type, func() component.Config { return createDefaultConfig() },
		connector.WithTracesToMetrics(createTracesToMetrics, metadata.TracesToMetricsStability),
		connector.WithLogsToMetrics(createLogsToMetrics, metadata.LogsToMetricsStability),
		connector.WithMetricsToMetrics(createMetricsToMetrics, metadata.MetricsToMetricsStability))
}

// instances holds one connector per component id and configuration, shared by its sides (one
// store: a second on the same directory would find it locked, and the service summary of spans
// and logs is one series).
var instances = struct {
	sync.Mutex
	m map[instanceID]*apmMetrics
}{m: map[instanceID]*apmMetrics{}}

type instanceID struct {
	id  component.ID
	cfg *Config
}

func sharedInstance(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (*shared, error) {
	instances.Lock()
	defer instances.Unlock()
	key := instanceID{id: set.ID, cfg: cfg.(*Config)}
	c, ok := instances.m[key]
	if !ok {
		var err error
		if c, err = newAPMMetrics(ctx, set, key.cfg, next); err != nil {
			return nil, err
		}
		instances.m[key] = c
	}
	return &shared{apmMetrics: c, key: key}, nil
}

// shared is one side of a shared connector; its shutdown also forgets the instance, so that a
// new pipeline graph (a reload) builds a new one.
type shared struct {
	*apmMetrics
	key instanceID
}

func (s *shared) Shutdown(ctx context.Context) error {
	instances.Lock()
	delete(instances.m, s.key)
	instances.Unlock()
	return s.apmMetrics.Shutdown(ctx)
}

func createTracesToMetrics(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Traces, error) {
	return sharedInstance(ctx, set, cfg, next)
}

func createLogsToMetrics(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Logs, error) {
	return sharedInstance(ctx, set, cfg, next)
}

func createMetricsToMetrics(ctx context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Metrics, error) {
	return sharedInstance(ctx, set, cfg, next)
}
