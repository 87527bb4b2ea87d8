# tracegate: an OpenTelemetry Collector distribution for trace ingestion into Elasticsearch.
# Requirements: Go (the version in go.mod or newer) and make. Everything else comes from the Go
# module proxy, pinned: ocb through the tool directive of internal/tools/go.mod.

GO        ?= go
TOOLS      = $(GO) tool -modfile=internal/tools/go.mod
VERSION   := $(shell sed -n 's/^  version: *//p' builder-config.yaml)
BINARY     = bin/tracegate
CONFIGS    = $(wildcard configs/*.yaml)
# Our Go modules: one per component and per internal package the components share (so that a
# distribution importing one component gets only what it imports), the test harness
# (internal/testbed) and the root module (benchmarks, end-to-end tests, tools). The generated
# cmd/tracegate and bench/tracegate-stock, internal/tools and the test/ modules have targets of
# their own.
COMPONENT_MODULES := $(sort $(patsubst %/go.mod,%,$(wildcard receiver/*/go.mod processor/*/go.mod connector/*/go.mod exporter/*/go.mod extension/*/go.mod)))
MODULES    := . $(sort $(patsubst %/go.mod,%,$(wildcard internal/*/go.mod))) $(COMPONENT_MODULES)
MODULES    := $(filter-out internal/tools,$(MODULES))
# each runs a command in every module: $(call each,<command>), the command run in the module's directory.
each = for m in $(MODULES); do (cd $$m && $(1)) || { echo "failed in module $$m"; exit 1; }; done
TEST_FLAGS ?= -count=1 -timeout 15m

.PHONY: bench-tools generate-stock es-setup all build build-stock generate check-generated check-licences test unit-test e2e-test fuzz lint validate-configs demo run es-standin bench-go clean help

all: build

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | \
		sed -e 's|$$(VERSION)|$(VERSION)|g' -e 's|$$(IMAGE)|$(IMAGE)|g' | expand -t 20
	@$(foreach b,$(BENCH_RUNS),printf '%-20s%s -> %s\n' '$(b)' "$($(b)_HELP)" '$(call bench_results,$(b))';)

build: ## build bin/tracegate (version $(VERSION), from builder-config.yaml) from the committed cmd/tracegate
	@# No -trimpath: it would compile every dependency a second time (the tests build them without
	@# it), which costs minutes on a clean CI machine.
	cd cmd/tracegate && $(GO) build -ldflags "-s -w" -o ../../$(BINARY) .
	@./$(BINARY) --version

STOCK_BINARY = bin/tracegate-stock

build-stock: ## build bin/tracegate-stock (stock components only: the benchmarks' baseline) from the committed bench/tracegate-stock
	cd bench/tracegate-stock && $(GO) build -ldflags "-s -w" -o ../../$(STOCK_BINARY) .
	@./$(STOCK_BINARY) --version

generate: ## regenerate cmd/tracegate with ocb and every component's internal/metadata with mdatagen
	$(TOOLS) builder --config builder-config.yaml --skip-compilation
	for m in $(COMPONENT_MODULES); do (cd $$m && $(GO) generate ./...) || exit 1; done
	@gofmt -w receiver processor extension connector exporter

generate-stock: ## regenerate bench/tracegate-stock (the benchmarks' baseline) with ocb from bench/builder-config.stock.yaml
	$(TOOLS) builder --config bench/builder-config.stock.yaml --skip-compilation
	@gofmt -w bench/tracegate-stock

GENERATED = cmd/tracegate bench/tracegate-stock receiver processor extension connector exporter

check-generated: generate generate-stock ## fail when generated code (both ocb outputs, internal/metadata, documentation.md) is stale or a collector module is off v0.148.0 / v1.54.0
	@git diff --exit-code --stat -- $(GENERATED) || { echo "generated files are stale: run 'make generate' and commit them"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- $(GENERATED) | grep -v -E '^\?\? (cmd/tracegate/tracegate|bench/tracegate-stock/tracegate-stock)$$')" || \
		{ git status --porcelain -- $(GENERATED); echo "uncommitted generated files"; exit 1; }
	@# Every collector module at the one release (EDOT's components name others; builder-config.yaml pins them).
	@GO=$(GO) scripts/check-collector-versions.sh cmd/tracegate bench/tracegate-stock

# golangci-lint, built once from the version pinned in internal/tools/lint/go.mod (rebuilt when the
# pin changes). The generated modules (cmd/tracegate, bench/tracegate-stock) are not linted.
GOLANGCI_LINT = bin/golangci-lint
LINT_FLAGS   ?= --timeout 10m

$(GOLANGCI_LINT): internal/tools/lint/go.mod internal/tools/lint/go.sum
	@mkdir -p $(@D)
	$(GO) build -o $@ -modfile=internal/tools/lint/go.mod github.com/golangci/golangci-lint/v2/cmd/golangci-lint

lint: $(GOLANGCI_LINT) ## gofmt (our code; generated cmd/tracegate excluded), go vet (every module), golangci-lint (our modules, test/ddclients, test/helm)
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^cmd/tracegate/')); test -z "$$out" || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	$(call each,$(GO) vet ./...)
	cd cmd/tracegate && $(GO) vet ./...
	cd test/ddclients && $(GO) vet ./...
	cd test/helm && $(GO) vet ./...
	cd test/edotdiff && $(GO) vet ./...
	$(call each,$(CURDIR)/$(GOLANGCI_LINT) run $(LINT_FLAGS) --config $(CURDIR)/.golangci.yml ./...)
	cd test/ddclients && ../../$(GOLANGCI_LINT) run $(LINT_FLAGS) --config ../../.golangci.yml ./...
	cd test/helm && ../../$(GOLANGCI_LINT) run $(LINT_FLAGS) --config ../../.golangci.yml ./...

check-licences: ## fail when a file outside testdata/ carries another project's licence header or licence text
	@scripts/check-licence-headers.sh

# What the examples need from the environment (their headers say so); placeholders, for validation only.
EXAMPLE_ENV = TRACEGATE_ENVIRONMENT=validation TRACEGATE_REDACTION_KEY=validation-only-key-of-32-bytes-x

validate-configs: build ## validate every file in configs/, each with every configs/elasticsearch overlay, every configs/examples overlay on configs/default.yaml, and the configs/kafka tiers
	@for c in $(CONFIGS); do ./$(BINARY) validate --config $$c && echo "valid: $$c" || exit 1; \
		for o in configs/elasticsearch/*.yaml; do ./$(BINARY) validate --config $$c --config $$o && echo "valid: $$c + $$o" || exit 1; done; done
	@for e in configs/examples/*.yaml; do $(EXAMPLE_ENV) ./$(BINARY) validate --config configs/default.yaml --config $$e && \
		echo "valid: configs/default.yaml + $$e" || exit 1; done
	@# The Kafka tiers: the agent on each base, the gateway on each base and on each base with each
	@# Elasticsearch overlay.
	@for c in $(CONFIGS); do ./$(BINARY) validate --config $$c --config configs/kafka/agent.yaml && echo "valid: $$c + configs/kafka/agent.yaml" || exit 1; \
		./$(BINARY) validate --config $$c --config configs/kafka/gateway.yaml && echo "valid: $$c + configs/kafka/gateway.yaml" || exit 1; \
		for o in configs/elasticsearch/*.yaml; do ./$(BINARY) validate --config $$c --config $$o --config configs/kafka/gateway.yaml && \
			echo "valid: $$c + $$o + configs/kafka/gateway.yaml" || exit 1; done; done

unit-test: ## unit tests of our packages (race detector on), module by module
	$(call each,$(GO) test $(TEST_FLAGS) -race $$($(GO) list ./... | grep -v /test/e2e))
	@# The intake conversion against EDOT's receiver, a module of its own: EDOT's components stay out of go.mod.
	cd test/edotdiff && $(GO) test $(TEST_FLAGS) ./...

e2e-test: build ## end-to-end tests through bin/tracegate and the Elasticsearch stand-in
	$(GO) test $(TEST_FLAGS) ./test/e2e/...

.PHONY: soak
soak: build ## long reliability scenarios (60 s of each Elasticsearch fault with both configs, 60 s overload; not in test): docs/reliability.md
	TRACEGATE_SOAK=1 $(GO) test -count=1 -timeout 60m -v -run 'TestElasticsearchFaults|TestOverload|TestSIGTERMPersistsQueue|TestHostileInput' \
		./test/e2e/ > bin/soak.log 2>&1; s=$$?; grep -aE 'RELIABILITY|^(--- |ok|FAIL)' bin/soak.log; echo "full log: bin/soak.log"; exit $$s

.PHONY: helm-test helm-lint helm-examples docker
# The chart's tests live in test/helm, a module of its own (Helm and k8s.io/api stay out of go.mod).
helm-test: build ## Helm chart: lint --strict, examples vs committed rendered manifests, strict k8s decoding, tracegate validate
	cd test/helm && $(GO) test $(TEST_FLAGS) ./...

helm-lint: ## helm lint --strict of charts/tracegate with its defaults and every example's values
	cd test/helm && $(GO) test $(TEST_FLAGS) -run '^TestLint$$' ./...

helm-examples: build ## regenerate charts/tracegate/examples/*/rendered from the chart
	cd test/helm && $(GO) test $(TEST_FLAGS) -run '^TestExamples$$' ./... -update

IMAGE ?= tracegate/tracegate:$(VERSION)
docker: ## build the container image $(IMAGE) (multi-stage Dockerfile; needs a Docker engine)
	docker build -t $(IMAGE) .

fuzz: ## run every fuzz test for FUZZTIME each (default 3s)
	@$(call each,GO=$(GO) $(CURDIR)/scripts/fuzz.sh ./...)

test: check-licences lint check-generated validate-configs unit-test fuzz e2e-test helm-test ## everything CI runs

demo: build ## stand-in + tracegate on the standard ports, traces over every protocol, counts per protocol
	@# The harness is a module of its own; the demo runs from here (it names bin/ and configs/).
	$(GO) -C internal/testbed build -o $(CURDIR)/bin/tracegate-demo ./cmd/tracegate-demo
	bin/tracegate-demo

run: build ## run tracegate with configs/default.yaml (ELASTICSEARCH_URL, default http://localhost:9200; buffer in TRACEGATE_BUFFER_DIR, default bin/buffer)
	mkdir -p $${TRACEGATE_BUFFER_DIR:-bin/buffer}
	TRACEGATE_BUFFER_DIR=$${TRACEGATE_BUFFER_DIR:-bin/buffer} ./$(BINARY) --config configs/default.yaml

es-setup: ## install the templates a mapping needs: make es-setup MODE=ecs|plain|otel (ELASTICSEARCH_URL, credentials from the environment)
	$(GO) run ./cmd/tracegate-es-setup --mode $(or $(MODE),otel)

es-standin: ## run the Elasticsearch stand-in (a test/demo tool) on 127.0.0.1:9200
	$(GO) -C internal/testbed run ./cmd/es-standin

# The pipeline benchmarks, one row each: <target>_ARGS (benchrun flags), _TITLE (the heading of
# the section of docs/benchmarks.md it rewrites), _HELP. Each writes bench/results/<name>.jsonl
# (<name> is the target without "bench-"; `make bench` writes pipeline.jsonl). The rate-limited
# runs read the saturation rates `make bench` measured. Long; not part of `make test`.
BENCH_FLAGS ?=
BENCH_RUNS = bench bench-disk bench-durability bench-memory bench-latency bench-latency-2p bench-es-slow bench-es-down bench-sweep bench-document-ids bench-apm bench-apm-classic bench-intake bench-sampling bench-datakit bench-kafka bench-gc bench-shipped bench-tail

bench_ARGS  =
bench_TITLE = Pipeline benchmarks
bench_HELP  = tracegate vs stock per protocol x mode at the Datakit load (BENCH_FLAGS=-quick for a short run)
bench-disk_ARGS  = -modes overflow,write_ahead
bench-disk_TITLE = Pipeline benchmarks, disk modes
bench-disk_HELP  = the disk modes (overflow, write_ahead) vs stock's persistent queue
bench-durability_ARGS  = -sweep bench/configs/durability.yaml -protocols otlp-grpc,otlp-http -duration 30s
bench-durability_TITLE = Durability: the cost of fsync
bench-durability_HELP  = write_ahead with and without fsync vs stock's persistent queue
bench-memory_ARGS  = -sweep bench/configs/memory.yaml -protocols otlp-grpc,ddtrace-v0.4
bench-memory_TITLE = Memory mode: peak RSS against buffer and batch size
bench-memory_HELP  = memory mode: peak RSS against buffer size and batch size
bench-latency_ARGS  = -rate-fraction 0.5 -modes nobuffer,memory -duration 30s -collectors tracegate,stock,floor
bench-latency_TITLE = Latency at half of stock's saturation rate
bench-latency_HELP  = p99 latency at half of stock's saturation rate, beside the receivers-only floor
bench-latency-2p_ARGS  = $(bench-latency_ARGS) -collector-env GOMAXPROCS=2
bench-latency-2p_TITLE = Latency at half saturation with GOMAXPROCS=2
bench-latency-2p_HELP  = bench-latency with GOMAXPROCS=2 (what Go picks in a container limited to 1 CPU)
bench-es-slow_ARGS  = -rate-fraction 0.5 -es-latency 500ms -modes overflow,memory -protocols otlp-http,otlp-grpc -duration 30s
bench-es-slow_TITLE = Elasticsearch slow: 500 ms per bulk
bench-es-slow_HELP  = half saturation rate, Elasticsearch answering each bulk after 500 ms
bench-es-down_ARGS  = -rate-fraction 0.5 -es-down -modes overflow,memory -protocols otlp-http,otlp-grpc -duration 30s
bench-es-down_TITLE = Elasticsearch down during the load
bench-es-down_HELP  = half saturation rate, Elasticsearch down for the whole load, then up
bench-sweep_ARGS  = -sweep bench/configs/sweep.yaml -es-latency 20ms -es-jitter 30ms -protocols otlp-grpc -duration 30s
bench-sweep_TITLE = Sweep
bench-sweep_HELP  = the configuration sweep behind the defaults, Elasticsearch at 20-50 ms per bulk

bench-document-ids_ARGS  = -sweep bench/configs/document-ids.yaml -protocols otlp-grpc,otlp-http,ddtrace-v0.4
bench-document-ids_TITLE = Document ids: on and off
bench-document-ids_HELP  = span throughput with the document ids on and off (memory mode)
bench-apm_ARGS  = -sweep bench/configs/apm.yaml -protocols otlp-http,zipkin-json,jaeger-thrift-http,ddtrace-v0.4 -table variants
bench-apm_TITLE = Kibana APM path: its cost per span
bench-apm_HELP  = CPU per span with the Kibana APM overlay against the same pipeline without it, and the stock build's rate (memory mode)
bench-apm-classic_ARGS  = -sweep bench/configs/apm-classic.yaml -protocols otlp-http,zipkin-json,jaeger-thrift-http,ddtrace-v0.4,elasticapm -duration 20s -table variants
bench-apm-classic_TITLE = Classic APM path (Kibana 8.x): its cost per span
bench-apm-classic_HELP  = CPU per span with configs/elasticsearch/apm-classic.yaml against the same pipeline without it, per protocol, alternated (memory mode)

bench-intake_ARGS  = -collectors tracegate -modes nobuffer,memory -protocols otlp-http,elasticapm,otlp-http,elasticapm,otlp-http,elasticapm
bench-intake_TITLE = Elastic APM agents' intake against OTLP/HTTP
bench-intake_HELP  = events per core through the elasticapm receiver against the same spans over OTLP/HTTP, alternated

bench-sampling_ARGS  = -sweep bench/configs/sampling.yaml -protocols ddtrace-v0.4 -duration 30s -check
bench-sampling_TITLE = Datadog sampling priority: spans per core at a 10 % sample rate
bench-sampling_HELP  = spans per core with the tracers' priority honoured (1 trace in 10 kept) against storing every trace, same load (memory mode)

bench-datakit_ARGS  = -sweep bench/configs/datakit.yaml -protocols ddtrace-v0.4,jaeger-thrift-http,zipkin-json,otlp-http -table datakit -check
bench-datakit_TITLE = Datakit's port against each protocol's own
bench-datakit_HELP  = spans per core through the datakit receiver's paths against the same encodings to their own receivers, alternated (memory mode)

bench-kafka_ARGS  = -sweep bench/configs/kafka.yaml -protocols otlp-http,ddtrace-v0.4 -duration 30s -table variants -check
bench-kafka_TITLE = Kafka tier: agent and gateway per core, delivery time
bench-kafka_HELP  = spans per core of the Kafka agent (clients to Kafka) and gateway (Kafka to Elasticsearch) against configs/default.yaml direct, and the time from acknowledgement to Elasticsearch through both (in-process Kafka)

bench-tail_ARGS  = -sweep bench/configs/tail.yaml -protocols otlp-http,ddtrace-v0.4 -duration 20s -table variants
bench-tail_TITLE = Tail sampling: its cost per core, and what its default policies save
bench-tail_HELP  = spans per core with configs/sampling/tail.yaml keeping everything against configs/default.yaml alone, and with its default policies against keeping everything, alternated (overflow mode)

bench-gc_ARGS  = -sweep bench/configs/gc.yaml -protocols otlp-grpc,otlp-http,ddtrace-v0.4,zipkin-json,jaeger-thrift-http -duration 20s -table variants
bench-gc_TITLE = GC sweep: GOGC and GOMEMLIMIT against spans per core and peak RSS
bench-gc_HELP  = GOGC (100 to 800, off with a GOMEMLIMIT) in memory and overflow modes, per protocol, against Go's default in the same run

bench-shipped_ARGS  = -sweep bench/configs/shipped.yaml -protocols otlp-grpc,otlp-http,zipkin-json,jaeger-thrift-http,ddtrace-v0.4,ddtrace-v0.5 -duration 20s -table variants
bench-shipped_TITLE = configs/default.yaml as shipped against stock, per protocol
bench-shipped_HELP  = spans per core of configs/default.yaml (overflow mode, document ids, GC defaults) against the stock build's exporter queue and batch processor, alternated twice

bench_results = bench/results/$(if $(filter bench,$(1)),pipeline,$(1:bench-%=%)).jsonl

define BENCH_RULE
.PHONY: $(1)
$(1): bench-tools
	BENCH_COMMAND="make $(1) BENCH_FLAGS='$$(BENCH_FLAGS)'" bin/benchrun $$($(1)_ARGS) \
		-section "## $$($(1)_TITLE) (make $(1))" -json $(call bench_results,$(1)) $$(BENCH_FLAGS)
endef
$(foreach b,$(BENCH_RUNS),$(eval $(call BENCH_RULE,$(b))))

.PHONY: bench-es-faults
bench-es-faults: bench-es-slow bench-es-down ## bench-es-slow, then bench-es-down

bench-tools: build build-stock
	$(GO) build -o bin/tracegen ./bench/tracegen
	$(GO) build -o bin/benchrun ./bench/benchrun

bench-go: ## Go benchmarks of the hot paths (ddtrace and Elastic APM intake decoding, HTTP handlers, buffer, apmmetrics and apmdocs connectors, tracesampling, ddtrace filters, trace paths), -benchmem
	@# Each component is a module of its own: each command runs in its directory.
	cd receiver/ddtracereceiver && $(GO) test -run '^$$' -bench . -benchmem -count 1 .
	cd receiver/elasticapmreceiver && $(GO) test -run '^$$' -bench . -benchmem -count 1 .
	cd processor/bufferprocessor && $(GO) test -run '^$$' -bench . -benchmem -count 1 ./...
	@# Not -bench .: BenchmarkMemory takes a minute per run (-bench Memory -benchtime 1x).
	cd connector/apmmetricsconnector && $(GO) test -run '^$$' -bench ConsumeTraces -benchmem -benchtime 20000x -count 1 .
	cd connector/apmdocsconnector && $(GO) test -run '^$$' -bench Traces -benchmem -count 1 .
	@# The inputs are copied outside the timer: a fixed count keeps the run short.
	cd processor/tracesamplingprocessor && $(GO) test -run '^$$' -bench ProcessTraces -benchmem -benchtime 3000x -count 1 .
	cd receiver/ddtracereceiver && $(GO) test -run '^$$' -bench . -benchmem -benchtime 2000x -count 1 ./internal/chunkfilter/
	@# Whole trace paths through several of our components (the root module holds them).
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./bench/pathbench/

clean: ## remove build output
	rm -rf bin cmd/tracegate/tracegate bench/tracegate-stock/tracegate-stock
