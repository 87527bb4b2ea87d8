# tracegate: an OpenTelemetry Collector distribution for trace ingestion into Elasticsearch.
# Requirements: Go (the version in go.mod or newer) and make. Everything else comes from the Go
# module proxy, pinned: ocb through the tool directive of internal/tools/go.mod.

GO        ?= go
TOOLS      = $(GO) tool -modfile=internal/tools/go.mod
VERSION   := $(shell sed -n 's/^  version: *//p' builder-config.yaml)
BINARY     = bin/tracegate
CONFIGS    = $(wildcard configs/*.yaml)
# Go packages of our own module (the generated cmd/tracegate is a module of its own).
PKGS       = ./...
TEST_FLAGS ?= -count=1 -timeout 15m

.PHONY: bench-tools bench-disk bench-durability bench-memory bench-latency bench-latency-2p bench-es-faults bench-sweep es-setup all build build-stock generate check-generated test unit-test e2e-test fuzz lint validate-configs demo run es-standin bench bench-go clean help

all: build

help: ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 20

build: ## build bin/tracegate (version $(VERSION), from builder-config.yaml) from the committed cmd/tracegate
	@# No -trimpath: it would compile every dependency a second time (the tests build them without
	@# it), which costs minutes on a clean CI machine.
	cd cmd/tracegate && $(GO) build -ldflags "-s -w" -o ../../$(BINARY) .
	@./$(BINARY) --version

STOCK_BINARY = bin/tracegate-stock

build-stock: ## build bin/tracegate-stock (stock components only: the benchmarks' baseline) from the committed cmd/tracegate-stock
	cd cmd/tracegate-stock && $(GO) build -ldflags "-s -w" -o ../../$(STOCK_BINARY) .
	@./$(STOCK_BINARY) --version

generate: ## regenerate cmd/tracegate with ocb and every component's internal/metadata with mdatagen
	$(TOOLS) builder --config builder-config.yaml --skip-compilation
	$(GO) generate ./receiver/... ./processor/...
	@gofmt -w receiver processor

GENERATED = cmd/tracegate receiver processor

check-generated: generate ## fail when generated code (cmd/tracegate, internal/metadata, documentation.md) is stale
	@git diff --exit-code --stat -- $(GENERATED) || { echo "generated files are stale: run 'make generate' and commit them"; exit 1; }
	@test -z "$$(git status --porcelain --untracked-files=all -- $(GENERATED) | grep -v '^?? cmd/tracegate/tracegate$$')" || \
		{ git status --porcelain -- $(GENERATED); echo "uncommitted generated files"; exit 1; }

lint: ## gofmt (our code; generated cmd/tracegate excluded), go vet (every module)
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^cmd/tracegate/')); test -z "$$out" || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	$(GO) vet $(PKGS)
	cd cmd/tracegate && $(GO) vet ./...
	cd test/ddclients && $(GO) vet ./...
	cd test/helm && $(GO) vet ./...

validate-configs: build ## validate every file in configs/, and each with every configs/elasticsearch overlay
	@for c in $(CONFIGS); do ./$(BINARY) validate --config $$c && echo "valid: $$c" || exit 1; \
		for o in configs/elasticsearch/*.yaml; do ./$(BINARY) validate --config $$c --config $$o && echo "valid: $$c + $$o" || exit 1; done; done

unit-test: ## unit tests of our packages (race detector on)
	$(GO) test $(TEST_FLAGS) -race $$($(GO) list $(PKGS) | grep -v /test/e2e)

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
	@GO=$(GO) ./scripts/fuzz.sh $(PKGS)

test: lint check-generated validate-configs unit-test fuzz e2e-test helm-test ## everything CI runs

demo: build ## stand-in + tracegate on the standard ports, traces over every protocol, counts per protocol
	$(GO) run ./cmd/tracegate-demo

run: build ## run tracegate with configs/default.yaml (ELASTICSEARCH_URL, default http://localhost:9200; buffer in TRACEGATE_BUFFER_DIR, default bin/buffer)
	mkdir -p $${TRACEGATE_BUFFER_DIR:-bin/buffer}
	TRACEGATE_BUFFER_DIR=$${TRACEGATE_BUFFER_DIR:-bin/buffer} ./$(BINARY) --config configs/default.yaml

es-setup: ## install the templates a mapping needs: make es-setup MODE=ecs|plain|otel (ELASTICSEARCH_URL, credentials from the environment)
	$(GO) run ./cmd/tracegate-es-setup --mode $(or $(MODE),otel)

es-standin: ## run the Elasticsearch stand-in (a test/demo tool) on 127.0.0.1:9200
	$(GO) run ./cmd/es-standin

BENCH_FLAGS ?=
bench: bench-tools ## pipeline benchmark, tracegate vs stock per protocol x mode -> docs/benchmarks.md/.json (BENCH_FLAGS=-quick for a short run)
	BENCH_COMMAND="make bench BENCH_FLAGS='$(BENCH_FLAGS)'" bin/benchrun $(BENCH_FLAGS)

bench-tools: build build-stock
	$(GO) build -o bin/tracegen ./cmd/tracegen
	$(GO) build -o bin/benchrun ./cmd/benchrun

# The runs below read or extend what `make bench` measured; each writes its own section of
# docs/benchmarks.md and its own JSON file. Long; not part of `make test`.
bench-disk: bench-tools ## the Datakit load in the disk modes (overflow, write_ahead), tracegate vs stock's persistent queue -> its own section
	BENCH_COMMAND="make bench-disk BENCH_FLAGS='$(BENCH_FLAGS)'" bin/benchrun -modes overflow,write_ahead \
		-section "## Pipeline benchmarks, disk modes (make bench-disk)" -json docs/benchmarks-disk.json $(BENCH_FLAGS)

bench-durability: bench-tools ## write_ahead with and without fsync, tracegate vs stock's persistent queue (configs/bench/durability.yaml)
	BENCH_COMMAND="make bench-durability BENCH_FLAGS='$(BENCH_FLAGS)'" bin/benchrun -sweep configs/bench/durability.yaml \
		-protocols otlp-grpc,otlp-http -duration 30s -section "## Durability: the cost of fsync (make bench-durability)" -json docs/benchmarks-durability.json $(BENCH_FLAGS)

bench-memory: bench-tools ## memory mode at the Datakit load: peak RSS against buffer size and batch size (configs/bench/memory.yaml)
	BENCH_COMMAND="make bench-memory BENCH_FLAGS='$(BENCH_FLAGS)'" bin/benchrun -sweep configs/bench/memory.yaml \
		-protocols otlp-grpc,ddtrace-v0.4 -section "## Memory mode: peak RSS against buffer and batch size (make bench-memory)" -json docs/benchmarks-memory.json $(BENCH_FLAGS)

bench-latency: bench-tools ## p99 latency at half of stock's saturation rate (from docs/benchmarks.json), beside the harness's floor (receivers only)
	BENCH_COMMAND="make bench-latency BENCH_FLAGS='$(BENCH_FLAGS)'" bin/benchrun -rate-fraction 0.5 -modes nobuffer,memory -duration 30s -collectors tracegate,stock,floor \
		-section "## Latency at half of stock's saturation rate (make bench-latency)" -json docs/benchmarks-latency.json $(BENCH_FLAGS)

bench-latency-2p: bench-tools ## bench-latency with GOMAXPROCS=2, what Go 1.25+ picks in a container limited to 1 CPU
	BENCH_COMMAND="make bench-latency-2p BENCH_FLAGS='$(BENCH_FLAGS)'" bin/benchrun -rate-fraction 0.5 -modes nobuffer,memory -duration 30s -collector-env GOMAXPROCS=2 -collectors tracegate,stock,floor \
		-section "## Latency at half saturation with GOMAXPROCS=2 (make bench-latency-2p)" -json docs/benchmarks-latency-2p.json $(BENCH_FLAGS)

bench-es-faults: bench-tools ## at half of stock's saturation rate: client latency and statuses with Elasticsearch slow (500 ms per bulk) and down, tracegate vs stock
	BENCH_COMMAND="make bench-es-faults" bin/benchrun -rate-fraction 0.5 -es-latency 500ms -modes overflow,memory -protocols otlp-http,otlp-grpc -duration 30s \
		-section "## Elasticsearch slow: 500 ms per bulk (make bench-es-faults)" -json docs/benchmarks-es-slow.json $(BENCH_FLAGS)
	BENCH_COMMAND="make bench-es-faults" bin/benchrun -rate-fraction 0.5 -es-down -modes overflow,memory -protocols otlp-http,otlp-grpc -duration 30s \
		-section "## Elasticsearch down during the load (make bench-es-faults)" -json docs/benchmarks-es-down.json $(BENCH_FLAGS)

bench-sweep: bench-tools ## the configuration sweep behind the defaults (configs/bench/sweep.yaml), Elasticsearch at 20-50 ms per bulk
	BENCH_COMMAND="make bench-sweep BENCH_FLAGS='$(BENCH_FLAGS)'" bin/benchrun -sweep configs/bench/sweep.yaml -es-latency 20ms -es-jitter 30ms \
		-protocols otlp-grpc -duration 30s -section "## Sweep (make bench-sweep)" -json docs/benchmarks-sweep.json $(BENCH_FLAGS)

bench-go: ## Go benchmarks of the hot paths (ddtrace decode+translate, HTTP handler, buffer), -benchmem
	$(GO) test -run '^$$' -bench . -benchmem -count 1 ./receiver/ddtracereceiver/ ./processor/bufferprocessor/...

clean: ## remove build output
	rm -rf bin cmd/tracegate/tracegate
