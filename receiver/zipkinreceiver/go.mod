module github.com/tracegate/tracegate/receiver/zipkinreceiver

go 1.25.0

replace github.com/tracegate/tracegate/internal/zipkinjson => ../../internal/zipkinjson

require (
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/translator/zipkin v0.148.0
	github.com/open-telemetry/opentelemetry-collector-contrib/receiver/zipkinreceiver v0.148.0
	github.com/openzipkin/zipkin-go v0.4.3
	github.com/stretchr/testify v1.11.1
	github.com/tracegate/tracegate/internal/zipkinjson v0.0.0-00010101000000-000000000000
	go.opentelemetry.io/collector/component v1.54.0
	go.opentelemetry.io/collector/component/componentstatus v0.148.0
	go.opentelemetry.io/collector/component/componenttest v0.148.0
	go.opentelemetry.io/collector/config/confighttp v0.148.0
	go.opentelemetry.io/collector/confmap v1.54.0
	go.opentelemetry.io/collector/confmap/xconfmap v0.148.0
	go.opentelemetry.io/collector/consumer v1.54.0
	go.opentelemetry.io/collector/consumer/consumererror v0.148.0
	go.opentelemetry.io/collector/consumer/consumertest v0.148.0
	go.opentelemetry.io/collector/pdata v1.54.0
	go.opentelemetry.io/collector/receiver v1.54.0
	go.opentelemetry.io/collector/receiver/receiverhelper v0.148.0
	go.opentelemetry.io/collector/receiver/receivertest v0.148.0
	go.opentelemetry.io/otel v1.42.0
	go.opentelemetry.io/otel/metric v1.42.0
	go.opentelemetry.io/otel/sdk/metric v1.42.0
	go.opentelemetry.io/otel/trace v1.42.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/apache/thrift v0.22.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/felixge/httpsnoop v1.0.4 // indirect
	github.com/foxboron/go-tpm-keyfiles v0.0.0-20251226215517-609e4778396f // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-version v1.8.0 // indirect
	github.com/jaegertracing/jaeger-idl v0.6.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/klauspost/compress v1.18.4 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/knadh/koanf/providers/confmap v1.0.0 // indirect
	github.com/knadh/koanf/v2 v2.3.3 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/internal/coreinternal v0.148.0 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/core/xidutils v0.148.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.26 // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	github.com/rs/cors v1.11.1 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/collector/client v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configauth v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configcompression v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configmiddleware v1.54.0 // indirect
	go.opentelemetry.io/collector/config/confignet v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configopaque v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configoptional v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configtls v1.54.0 // indirect
	go.opentelemetry.io/collector/consumer/xconsumer v0.148.0 // indirect
	go.opentelemetry.io/collector/extension/extensionauth v1.54.0 // indirect
	go.opentelemetry.io/collector/extension/extensionmiddleware v0.148.0 // indirect
	go.opentelemetry.io/collector/featuregate v1.54.0 // indirect
	go.opentelemetry.io/collector/internal/componentalias v0.148.0 // indirect
	go.opentelemetry.io/collector/pdata/pprofile v0.148.0 // indirect
	go.opentelemetry.io/collector/pipeline v1.54.0 // indirect
	go.opentelemetry.io/collector/pipeline/xpipeline v0.148.0 // indirect
	go.opentelemetry.io/collector/receiver/xreceiver v0.148.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.67.0 // indirect
	go.opentelemetry.io/otel/sdk v1.42.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.1 // indirect
	go.yaml.in/yaml/v3 v3.0.4 // indirect
	golang.org/x/crypto v0.48.0 // indirect
	golang.org/x/net v0.51.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260209200024-4cfbd4190f57 // indirect
	google.golang.org/grpc v1.79.2 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
