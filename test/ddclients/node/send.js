'use strict'

// send.js sends traces to a Datadog trace intake (a Datadog Agent, or tracegate's ddtrace receiver)
// with the real Node.js tracer, dd-trace, and prints what it sent as JSON lines, one per span, in
// the format of test/ddclients/cmd/ddgo-send, so a test can look for every span at the other end.
// The root's line also carries the trace's sampling priority.
//
// Every trace is a server span ("http.request", as dd-trace's http plugin names it) with a client
// child ("inventory.lookup") that finishes with an error.
//
//   DD_TRACE_AGENT_URL=http://127.0.0.1:8126 DD_TRACE_AGENT_PROTOCOL_VERSION=0.5 \
//     node send.js --service shop --traces 5
//
// The tracer sends its payload when the process is about to exit (its beforeExit handler), as in
// any short-lived program. The process exits non-zero if the tracer logged an error, or if no
// payload was answered by the intake.
//
// With an agent URL, dd-trace also posts its DogStatsD client's own metrics to
// <url>/dogstatsd/v2/proxy when it exits; tracegate accepts and discards them, so that is no error.
// DDJS_SEND_DEBUG=1 echoes the tracer's debug log to stderr.

const { parseArgs } = require('node:util')

const { values: args } = parseArgs({
  options: {
    'agent-url': { type: 'string', default: process.env.DD_TRACE_AGENT_URL || '' },
    service: { type: 'string', default: process.env.DD_SERVICE || 'ddjs-send' },
    traces: { type: 'string', default: '5' },
  },
})
const traces = Number.parseInt(args.traces, 10)
if (!args['agent-url']) {
  console.error('send.js: --agent-url or DD_TRACE_AGENT_URL is required')
  process.exit(2)
}
if (!(traces >= 1)) {
  console.error('send.js: --traces must be at least 1')
  process.exit(2)
}

const logger = require('./quiet').quietTracerLogger('send.js')

const tracer = require('dd-trace').init({
  url: args['agent-url'],
  service: args.service,
  logger,
  plugins: false,
  startupLogs: false,
  runtimeMetrics: false,
})


function makeTrace (i) {
  const start = Date.now()
  const rootMeta = {
    'span.kind': 'server',
    'http.method': 'GET',
    'http.route': '/items/{id}',
    'http.status_code': '200',
    'tracegate.client': 'dd-trace-js',
  }
  const rootMetrics = { 'tracegate.test.index': i }
  const root = tracer.startSpan('http.request', {
    startTime: start,
    tags: { ...rootMeta, ...rootMetrics, 'resource.name': 'GET /items/{id}', 'span.type': 'web' },
  })

  const childMeta = {
    'span.kind': 'client',
    'peer.hostname': 'inventory.internal',
    'inventory.sku': `sku-${i}`,
  }
  const childMetrics = { 'tracegate.retries': 2, 'tracegate.ratio': 0.25 }
  const child = tracer.startSpan('inventory.lookup', {
    childOf: root,
    startTime: start + 1,
    tags: { ...childMeta, ...childMetrics, 'resource.name': 'lookup stock', 'span.type': 'http' },
  })
  const failure = new Error(`inventory unavailable for sku-${i}`)
  child.setTag('error', failure)
  child.finish(start + 3)
  root.finish(start + 5)
  childMeta['error.message'] = failure.message

  const rootID = root.context().toSpanId(true)
  return [
    {
      trace_id: root.context().toTraceId(true),
      span_id: rootID,
      parent_id: '',
      name: 'http.request',
      resource: 'GET /items/{id}',
      service: args.service,
      type: 'web',
      error: false,
      meta: rootMeta,
      metrics: rootMetrics,
      // The tracer's decision for the trace (2 kept, -1 rejected by DD_TRACE_SAMPLE_RATE; 1 or 0
      // from the intake's rate_by_service), made when the root finished. dd-trace 5.x has no
      // public accessor for it; the tests pin the tracer's version.
      sampling_priority: root.context()._sampling.priority,
    },
    {
      trace_id: child.context().toTraceId(true),
      span_id: child.context().toSpanId(true),
      parent_id: rootID,
      name: 'inventory.lookup',
      resource: 'lookup stock',
      service: args.service,
      type: 'http',
      error: true,
      meta: childMeta,
      metrics: childMetrics,
    },
  ]
}

const lines = []
for (let i = 0; i < traces; i++) {
  for (const s of makeTrace(i)) lines.push(JSON.stringify(s))
}
process.stdout.write(lines.join('\n') + '\n')
