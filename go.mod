module github.com/tracegate/tracegate

go 1.25.0

require (
	github.com/jaegertracing/jaeger-idl v0.6.0
	github.com/openzipkin/zipkin-go v0.4.3
	github.com/stretchr/testify v1.11.1
	github.com/tracegate/tracegate/internal/estemplates v0.0.0-00010101000000-000000000000
	github.com/tracegate/tracegate/internal/esversion v0.0.0-00010101000000-000000000000
	github.com/tracegate/tracegate/internal/testbed v0.0.0-00010101000000-000000000000
	github.com/twmb/franz-go v1.20.1
	github.com/twmb/franz-go/pkg/kfake v0.0.0-20251021233722-4ca18825d8c0
	github.com/twmb/franz-go/pkg/kmsg v1.12.0
	go.opentelemetry.io/collector/pdata v1.54.0
	go.opentelemetry.io/otel v1.42.0
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp v1.42.0
	go.opentelemetry.io/otel/sdk v1.42.0
	go.opentelemetry.io/otel/trace v1.42.0
	go.yaml.in/yaml/v3 v3.0.4
	golang.org/x/net v0.51.0
	golang.org/x/sys v0.42.0
	google.golang.org/grpc v1.79.2
	google.golang.org/protobuf v1.36.11
)

require (
	github.com/apache/thrift v0.22.0 // indirect
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/davecgh/go-spew v1.1.2-0.20180830191138-d8f796af33cc // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.28.0 // indirect
	github.com/hashicorp/go-version v1.8.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/klauspost/compress v1.18.4 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	github.com/philhofer/fwd v1.2.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.26 // indirect
	github.com/pmezard/go-difflib v1.0.1-0.20181226105442-5d4384ee4fb2 // indirect
	github.com/tinylib/msgp v1.6.5 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/collector/featuregate v1.54.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace v1.42.0 // indirect
	go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc v1.42.0 // indirect
	go.opentelemetry.io/otel/metric v1.42.0 // indirect
	go.opentelemetry.io/proto/otlp v1.10.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/crypto v0.48.0 // indirect
	golang.org/x/text v0.34.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260226221140-a57be14db171 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260226221140-a57be14db171 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)

require (
	github.com/elastic/opentelemetry-collector-components/processor/elasticapmprocessor v0.36.0
	github.com/tracegate/tracegate/connector/apmmetricsconnector v0.0.0-00010101000000-000000000000
	github.com/tracegate/tracegate/processor/bufferprocessor v0.0.0-00010101000000-000000000000
	github.com/tracegate/tracegate/processor/elasticmappingprocessor v0.0.0-00010101000000-000000000000
	github.com/tracegate/tracegate/receiver/ddtracereceiver v0.0.0-00010101000000-000000000000
	github.com/tracegate/tracegate/receiver/elasticapmreceiver v0.0.0-00010101000000-000000000000
	go.opentelemetry.io/collector/component v1.54.0
	go.opentelemetry.io/collector/component/componenttest v0.148.0
	go.opentelemetry.io/collector/connector v0.148.0
	go.opentelemetry.io/collector/consumer v1.54.0
	go.opentelemetry.io/collector/consumer/consumertest v0.148.0
	go.opentelemetry.io/collector/exporter/exportertest v0.148.0
	go.opentelemetry.io/collector/processor/processortest v0.148.0
	go.opentelemetry.io/collector/receiver v1.54.0
	go.opentelemetry.io/collector/receiver/receivertest v0.148.0
)

require (
	github.com/DataDog/datadog-agent/pkg/obfuscate v0.77.0-devel.0.20260213154712-e02b9359151a // indirect
	github.com/DataDog/datadog-agent/pkg/proto v0.75.0 // indirect
	github.com/DataDog/datadog-go/v5 v5.8.3 // indirect
	github.com/DataDog/go-sqllexer v0.1.12 // indirect
	github.com/DataDog/zstd v1.5.6 // indirect
	github.com/Microsoft/go-winio v0.6.2 // indirect
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/antchfx/xmlquery v1.5.0 // indirect
	github.com/antchfx/xpath v1.3.6 // indirect
	github.com/axiomhq/hyperloglog v0.2.5 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cilium/ebpf v0.20.0 // indirect
	github.com/cockroachdb/errors v1.11.3 // indirect
	github.com/cockroachdb/fifo v0.0.0-20240816210425-c5d0cb0b6fc0 // indirect
	github.com/cockroachdb/logtags v0.0.0-20241215232642-bb51bb14a506 // indirect
	github.com/cockroachdb/pebble v1.1.5 // indirect
	github.com/cockroachdb/redact v1.1.6 // indirect
	github.com/cockroachdb/tokenbucket v0.0.0-20230807174530-cc333fc44b06 // indirect
	github.com/dgryski/go-metro v0.0.0-20180109044635-280f6062b5bc // indirect
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/elastic/apm-data v1.19.5 // indirect
	github.com/elastic/elastic-transport-go/v8 v8.8.0 // indirect
	github.com/elastic/go-docappender/v2 v2.12.1 // indirect
	github.com/elastic/go-freelru v0.16.0 // indirect
	github.com/elastic/go-grok v0.3.1 // indirect
	github.com/elastic/go-structform v0.0.12 // indirect
	github.com/elastic/lunes v0.2.0 // indirect
	github.com/elastic/opentelemetry-collector-components/internal/elasticattr v0.37.0 // indirect
	github.com/elastic/opentelemetry-collector-components/processor/lsmintervalprocessor v0.36.0 // indirect
	github.com/elastic/opentelemetry-lib v0.21.0 // indirect
	github.com/felixge/httpsnoop v1.0.4 // indirect
	github.com/foxboron/go-tpm-keyfiles v0.0.0-20251226215517-609e4778396f // indirect
	github.com/fsnotify/fsnotify v1.9.0 // indirect
	github.com/getsentry/sentry-go v0.31.1 // indirect
	github.com/go-viper/mapstructure/v2 v2.5.0 // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/goccy/go-json v0.10.5 // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/golang/groupcache v0.0.0-20241129210726-2c02b8208cf8 // indirect
	github.com/golang/snappy v1.0.0 // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/hashicorp/golang-lru v1.0.2 // indirect
	github.com/hashicorp/golang-lru/v2 v2.0.7 // indirect
	github.com/iancoleman/strcase v0.3.0 // indirect
	github.com/kamstrup/intmap v0.5.1 // indirect
	github.com/klauspost/cpuid/v2 v2.3.0 // indirect
	github.com/knadh/koanf/maps v0.1.2 // indirect
	github.com/knadh/koanf/providers/confmap v1.0.0 // indirect
	github.com/knadh/koanf/v2 v2.3.3 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/lestrrat-go/strftime v1.1.1 // indirect
	github.com/lightstep/go-expohisto v1.0.0 // indirect
	github.com/magefile/mage v1.15.0 // indirect
	github.com/minio/sha256-simd v1.0.1 // indirect
	github.com/mitchellh/copystructure v1.2.0 // indirect
	github.com/mitchellh/reflectwalk v1.0.2 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/exporter/elasticsearchexporter v0.148.0 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/internal/common v0.148.0 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/internal/coreinternal v0.148.0 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/ottl v0.148.0 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatautil v0.148.0 // indirect
	github.com/open-telemetry/opentelemetry-collector-contrib/pkg/sampling v0.148.0 // indirect
	github.com/outcaste-io/ristretto v0.2.3 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20240319094008-0393e58bdf10 // indirect
	github.com/prometheus/client_golang v1.23.2 // indirect
	github.com/prometheus/client_model v0.6.2 // indirect
	github.com/prometheus/common v0.67.5 // indirect
	github.com/prometheus/procfs v0.20.1 // indirect
	github.com/rogpeppe/go-internal v1.14.1 // indirect
	github.com/rs/cors v1.11.1 // indirect
	github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter v0.0.0
	github.com/tracegate/tracegate/internal/apmevent v0.0.0-00010101000000-000000000000 // indirect
	github.com/tracegate/tracegate/internal/ddsampler v0.0.0-00010101000000-000000000000 // indirect
	github.com/tracegate/tracegate/internal/httpserve v0.0.0-00010101000000-000000000000 // indirect
	github.com/tracegate/tracegate/internal/readiness v0.0.0-00010101000000-000000000000 // indirect
	github.com/tracegate/tracegate/internal/refusalwait v0.0.0-00010101000000-000000000000 // indirect
	github.com/tracegate/tracegate/internal/sharedcomponent v0.0.0-00010101000000-000000000000 // indirect
	github.com/tracegate/tracegate/internal/warnonce v0.0.0-00010101000000-000000000000 // indirect
	github.com/twmb/murmur3 v1.1.8 // indirect
	github.com/ua-parser/uap-go v0.0.0-20251207011819-db9adb27a0b8 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.elastic.co/fastjson v1.5.1 // indirect
	go.opentelemetry.io/collector/client v1.54.0 // indirect
	go.opentelemetry.io/collector/component/componentstatus v0.148.0 // indirect
	go.opentelemetry.io/collector/config/configauth v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configcompression v1.54.0 // indirect
	go.opentelemetry.io/collector/config/confighttp v0.148.0 // indirect
	go.opentelemetry.io/collector/config/configmiddleware v1.54.0 // indirect
	go.opentelemetry.io/collector/config/confignet v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configopaque v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configoptional v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configretry v1.54.0 // indirect
	go.opentelemetry.io/collector/config/configtls v1.54.0 // indirect
	go.opentelemetry.io/collector/confmap v1.54.0 // indirect
	go.opentelemetry.io/collector/confmap/xconfmap v0.148.0 // indirect
	go.opentelemetry.io/collector/consumer/consumererror v0.148.0 // indirect
	go.opentelemetry.io/collector/consumer/consumererror/xconsumererror v0.148.0 // indirect
	go.opentelemetry.io/collector/consumer/xconsumer v0.148.0 // indirect
	go.opentelemetry.io/collector/exporter v1.54.0 // indirect
	go.opentelemetry.io/collector/exporter/exporterhelper v0.148.0 // indirect
	go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper v0.148.0 // indirect
	go.opentelemetry.io/collector/exporter/xexporter v0.148.0 // indirect
	go.opentelemetry.io/collector/extension v1.54.0 // indirect
	go.opentelemetry.io/collector/extension/extensionauth v1.54.0 // indirect
	go.opentelemetry.io/collector/extension/extensionmiddleware v0.148.0 // indirect
	go.opentelemetry.io/collector/extension/xextension v0.148.0 // indirect
	go.opentelemetry.io/collector/internal/componentalias v0.148.0 // indirect
	go.opentelemetry.io/collector/internal/fanoutconsumer v0.148.0 // indirect
	go.opentelemetry.io/collector/pdata/pprofile v0.148.0 // indirect
	go.opentelemetry.io/collector/pdata/testdata v0.148.0 // indirect
	go.opentelemetry.io/collector/pdata/xpdata v0.148.0 // indirect
	go.opentelemetry.io/collector/pipeline v1.54.0 // indirect
	go.opentelemetry.io/collector/pipeline/xpipeline v0.148.0 // indirect
	go.opentelemetry.io/collector/processor v1.54.0 // indirect
	go.opentelemetry.io/collector/processor/processorhelper v0.148.0 // indirect
	go.opentelemetry.io/collector/processor/xprocessor v0.148.0 // indirect
	go.opentelemetry.io/collector/receiver/receiverhelper v0.148.0 // indirect
	go.opentelemetry.io/collector/receiver/xreceiver v0.148.0 // indirect
	go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp v0.67.0 // indirect
	go.opentelemetry.io/ebpf-profiler v0.0.202610 // indirect
	go.opentelemetry.io/otel/sdk/metric v1.42.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.uber.org/zap v1.27.1 // indirect
	go.yaml.in/yaml/v2 v2.4.3 // indirect
	golang.org/x/exp v0.0.0-20260218203240-3dfff04db8fa // indirect
	golang.org/x/sync v0.20.0 // indirect
)

replace github.com/tracegate/tracegate/connector/apmmetricsconnector => ./connector/apmmetricsconnector

replace github.com/tracegate/tracegate/internal/configtest => ./internal/configtest

replace github.com/tracegate/tracegate/internal/ddsampler => ./internal/ddsampler

replace github.com/tracegate/tracegate/internal/estemplates => ./internal/estemplates

replace github.com/tracegate/tracegate/internal/esversion => ./internal/esversion

replace github.com/tracegate/tracegate/internal/httpserve => ./internal/httpserve

replace github.com/tracegate/tracegate/internal/readiness => ./internal/readiness

replace github.com/tracegate/tracegate/internal/refusalwait => ./internal/refusalwait

replace github.com/tracegate/tracegate/internal/sharedcomponent => ./internal/sharedcomponent

replace github.com/tracegate/tracegate/internal/testbed => ./internal/testbed

replace github.com/tracegate/tracegate/internal/warnonce => ./internal/warnonce

replace github.com/tracegate/tracegate/processor/bufferprocessor => ./processor/bufferprocessor

replace github.com/tracegate/tracegate/processor/elasticmappingprocessor => ./processor/elasticmappingprocessor

replace github.com/tracegate/tracegate/receiver/ddtracereceiver => ./receiver/ddtracereceiver

replace github.com/tracegate/tracegate/receiver/elasticapmreceiver => ./receiver/elasticapmreceiver

replace github.com/tracegate/tracegate/internal/apmevent => ./internal/apmevent

replace github.com/tracegate/tracegate/exporter/elasticsearchdocumentsexporter => ./exporter/elasticsearchdocumentsexporter
