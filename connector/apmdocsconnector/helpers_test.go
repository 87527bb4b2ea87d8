package apmdocsconnector

import (
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/metadata"
)

func reasonAttrs(reason string) attribute.Set {
	return attribute.NewSet(attribute.String("reason", reason))
}

func metricdatatestIgnore() []metricdatatest.Option {
	return []metricdatatest.Option{metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars()}
}

func connectortestSettings() connector.Settings { return connectortest.NewNopSettings(metadata.Type) }
