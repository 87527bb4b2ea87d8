'use strict'
// Sends --traces traces to tracegate's datakit receiver at --url with one real client
// (--client otel | zipkin | jaeger), on Datakit's paths: /otel/v1/traces (OTLP/HTTP JSON),
// /api/v2/spans (Zipkin v2 JSON), /apis/traces (Jaeger Thrift binary). Each trace is a server
// span "GET /items/{id}" with a client child "inventory.lookup" that fails. Prints one JSON line
// per span: trace_id (32 hex), span_id, parent_id ("" for the root), name, kind, error, service,
// and the string attributes it set.

const args = {}
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1]
const base = args.url
const service = args.service
const traces = Number(args.traces || 5)

const pad = (hex, n) => hex.padStart(n, '0')
const lines = []
const record = (traceId, spanId, parentId, name, kind, error, attrs) => {
  lines.push({ trace_id: pad(traceId, 32), span_id: pad(spanId, 16), parent_id: parentId ? pad(parentId, 16) : '', name, kind, error, service, attributes: attrs })
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function sendOTel () {
  const { BasicTracerProvider, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base')
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http')
  const { Resource } = require('@opentelemetry/resources')
  const api = require('@opentelemetry/api')
  const provider = new BasicTracerProvider({ resource: new Resource({ 'service.name': service }) })
  provider.addSpanProcessor(new SimpleSpanProcessor(new OTLPTraceExporter({ url: base + '/otel/v1/traces' })))
  const tracer = provider.getTracer('tracegate-dknode')
  for (let i = 0; i < traces; i++) {
    const attrs = { 'shop.item': String(i) }
    const root = tracer.startSpan('GET /items/{id}', { kind: api.SpanKind.SERVER, attributes: attrs })
    const ctx = api.trace.setSpan(api.context.active(), root)
    const child = tracer.startSpan('inventory.lookup', { kind: api.SpanKind.CLIENT, attributes: attrs }, ctx)
    child.setStatus({ code: api.SpanStatusCode.ERROR, message: 'lookup failed' })
    child.end()
    root.end()
    const r = root.spanContext()
    const c = child.spanContext()
    record(r.traceId, r.spanId, '', 'GET /items/{id}', 'Server', false, attrs)
    record(c.traceId, c.spanId, r.spanId, 'inventory.lookup', 'Client', true, attrs)
  }
  await provider.forceFlush()
  await provider.shutdown()
}

async function sendZipkin () {
  const { Tracer, BatchRecorder, ExplicitContext, Annotation, jsonEncoder: { JSON_V2 } } = require('zipkin')
  const { HttpLogger } = require('zipkin-transport-http')
  let failed = null
  const logger = new HttpLogger({ endpoint: base + '/api/v2/spans', jsonEncoder: JSON_V2, httpInterval: 100, log: { error: (e) => { failed = e } } })
  const tracer = new Tracer({ ctxImpl: new ExplicitContext(), recorder: new BatchRecorder({ logger }), localServiceName: service, traceId128Bit: true })
  for (let i = 0; i < traces; i++) {
    const attrs = { 'shop.item': String(i) }
    tracer.setId(tracer.createRootId())
    const root = tracer.id
    tracer.recordServiceName(service)
    tracer.recordRpc('GET /items/{id}')
    tracer.recordAnnotation(new Annotation.ServerRecv())
    tracer.recordBinary('shop.item', attrs['shop.item'])
    tracer.setId(tracer.createChildId())
    const child = tracer.id
    tracer.recordServiceName(service)
    tracer.recordRpc('inventory.lookup')
    tracer.recordAnnotation(new Annotation.ClientSend())
    tracer.recordBinary('shop.item', attrs['shop.item'])
    tracer.recordBinary('error', 'lookup failed')
    tracer.recordAnnotation(new Annotation.ClientRecv())
    tracer.setId(root)
    tracer.recordAnnotation(new Annotation.ServerSend())
    record(root.traceId, root.spanId, '', 'get /items/{id}', 'Server', false, attrs)
    record(child.traceId, child.spanId, root.spanId, 'inventory.lookup', 'Client', true, attrs)
  }
  await sleep(1500) // the logger posts every httpInterval
  logger.stop && logger.stop()
  if (failed) throw failed
}

async function sendJaeger () {
  const { initTracer } = require('jaeger-client')
  let failed = null
  const tracer = initTracer({
    serviceName: service,
    sampler: { type: 'const', param: 1 },
    reporter: { collectorEndpoint: base + '/apis/traces', flushIntervalMs: 100 }
  }, { logger: { info () {}, error (e) { failed = e } } })
  for (let i = 0; i < traces; i++) {
    const attrs = { 'shop.item': String(i) }
    const root = tracer.startSpan('GET /items/{id}', { tags: { 'span.kind': 'server', ...attrs } })
    const child = tracer.startSpan('inventory.lookup', { childOf: root, tags: { 'span.kind': 'client', error: true, ...attrs } })
    child.finish()
    root.finish()
    const r = root.context()
    const c = child.context()
    record(r.traceIdStr, r.spanIdStr, '', 'GET /items/{id}', 'Server', false, attrs)
    record(c.traceIdStr, c.spanIdStr, r.spanIdStr, 'inventory.lookup', 'Client', true, attrs)
  }
  await new Promise((resolve) => tracer.close(resolve))
  if (failed) throw new Error(String(failed))
}

const clients = { otel: sendOTel, zipkin: sendZipkin, jaeger: sendJaeger }
clients[args.client]().then(() => {
  for (const l of lines) console.log(JSON.stringify(l))
}, (err) => {
  console.error(err)
  process.exit(1)
})
