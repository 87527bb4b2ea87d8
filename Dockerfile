# syntax=docker/dockerfile:1
# tracegate container image: `make docker` (docker build -t tracegate/tracegate:<version> .).
# Multi-stage: the binary is built with the Makefile (`make build`, static, CGO off) in the Go
# image, then copied into an empty (scratch) image with the CA certificates, running as
# UID/GID 10001, like the opentelemetry-collector-releases images.

ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
ENV CGO_ENABLED=0 GOFLAGS=-buildvcs=false
# Modules first: this layer stays cached while only our sources change. The binary's go.mod
# replaces each of our modules with its directory, so every one's go.mod must be there.
COPY cmd/tracegate/go.mod cmd/tracegate/go.sum ./cmd/tracegate/
COPY internal/esversion/go.* ./internal/esversion/
COPY internal/ddsampler/go.* ./internal/ddsampler/
COPY internal/httpserve/go.* ./internal/httpserve/
COPY internal/readiness/go.* ./internal/readiness/
COPY internal/refusalwait/go.* ./internal/refusalwait/
COPY internal/apmevent/go.* ./internal/apmevent/
COPY internal/sharedcomponent/go.* ./internal/sharedcomponent/
COPY internal/warnonce/go.* ./internal/warnonce/
COPY internal/zipkinjson/go.* ./internal/zipkinjson/
COPY internal/estemplates/go.* ./internal/estemplates/
COPY internal/configtest/go.* ./internal/configtest/
COPY internal/gcdefaults/go.* ./internal/gcdefaults/
COPY internal/testbed/go.* ./internal/testbed/
COPY receiver/ddtracereceiver/go.* ./receiver/ddtracereceiver/
COPY receiver/elasticapmreceiver/go.* ./receiver/elasticapmreceiver/
COPY receiver/datakitreceiver/go.* ./receiver/datakitreceiver/
COPY receiver/zipkinreceiver/go.* ./receiver/zipkinreceiver/
COPY processor/bufferprocessor/go.* ./processor/bufferprocessor/
COPY processor/elasticmappingprocessor/go.* ./processor/elasticmappingprocessor/
COPY processor/tracesamplingprocessor/go.* ./processor/tracesamplingprocessor/
COPY processor/durabletailsamplingprocessor/go.* ./processor/durabletailsamplingprocessor/
COPY connector/apmmetricsconnector/go.* ./connector/apmmetricsconnector/
COPY connector/apmdocsconnector/go.* ./connector/apmdocsconnector/
COPY exporter/elasticsearchdocumentsexporter/go.* ./exporter/elasticsearchdocumentsexporter/
COPY extension/readylogextension/go.* ./extension/readylogextension/
RUN cd cmd/tracegate && go mod download
COPY . .
RUN make build \
 && mkdir -p /out/var/lib/tracegate/buffer \
 && cp bin/tracegate /out/tracegate \
 && cp configs/default.yaml /out/config.yaml

FROM scratch
ARG USER_UID=10001
ARG USER_GID=10001
LABEL org.opencontainers.image.title="tracegate" \
      org.opencontainers.image.description="Trace-ingestion collector for Elasticsearch (OpenTelemetry Collector distribution)"
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build --chmod=755 /out/tracegate /tracegate
COPY --from=build --chmod=644 /out/config.yaml /etc/tracegate/config.yaml
# The default config's disk buffer (TRACEGATE_BUFFER_DIR); mount a volume here to keep it.
COPY --from=build --chown=${USER_UID}:${USER_GID} /out/var/lib/tracegate /var/lib/tracegate
USER ${USER_UID}:${USER_GID}

# otlp gRPC, otlp HTTP, zipkin, jaeger gRPC, jaeger Thrift HTTP, ddtrace (Datadog tracers),
# elasticapm (Elastic APM agents)
EXPOSE 4317/tcp 4318/tcp 9411/tcp 14250/tcp 14268/tcp 8126/tcp 8200/tcp 9529/tcp
# jaeger Thrift compact and binary (agent protocol)
EXPOSE 6831/udp 6832/udp
# health_check, own metrics (Prometheus)
EXPOSE 13133/tcp 8888/tcp

ENTRYPOINT ["/tracegate"]
CMD ["--config", "/etc/tracegate/config.yaml"]
