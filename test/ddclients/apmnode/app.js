'use strict'

// app.js is a small web application traced by the real Elastic APM Node.js agent
// (elastic-apm-node), which sends its events to an APM Server intake (POST /intake/v2/events), or
// to tracegate's receiver for it.
//
// The agent starts first, so that it hooks http and express when they load. Then an express server
// on a random loopback port:
//
//   GET /users/:id  makes an HTTP GET (node:http) to /backend on the same server (the agent's http
//                   exit span, whose traceparent makes /backend's transaction its child), and a
//                   custom span apm.startSpan('compute', 'app', 'internal'), and answers 200.
//   GET /backend    answers 200 with the ids of its own transaction and of its parent span.
//   GET /fail       records apm.captureError(new Error('handled failure')) and answers 500.
//
// The program itself calls /users/<i> and /fail N times each (untraced: outside a transaction the
// agent makes no span and sends no trace headers), waits a bit longer than metricsInterval so that
// at least one metricset goes out, calls apm.flush() and exits 0 (non-zero if the flush failed).
// It prints one JSON line per request to stdout (see the README).
//
//   APM_SERVER_URL=http://127.0.0.1:8200 node app.js --requests 3
//
// Configuration (the flag wins over the environment):
//   --server-url       APM_SERVER_URL (required)
//   --service          APM_SERVICE_NAME, default apm-node-e2e
//   --service-version  APM_SERVICE_VERSION, default 1.0.0
//   --requests         REQUESTS, default 1
//   --interval-ms      REQUEST_INTERVAL_MS, the pause between two rounds of requests, default 0
//   APM_METRICS_INTERVAL  metricsInterval, default 1s
//   APM_CENTRAL_CONFIG=1  centralConfig on (off otherwise)
//   APM_SERVER_VERSION    apmServerVersion; unset, the agent asks the server (GET /)
//   APM_SECRET_TOKEN      secretToken (Authorization: Bearer ...)
//   APM_API_KEY           apiKey (Authorization: ApiKey ...)
//   APM_LOG_LEVEL         the agent's logLevel, default info
//   APM_TRANSACTION_SAMPLE_RATE  transactionSampleRate, default 1 (an unsampled transaction has
//                         no spans: its line says "sampled": false and has no compute_span_id)
//   --strict              exit 3 if the agent logged at error or fatal
//
// The agent's own ELASTIC_APM_* environment variables override all of this (the agent reads them
// after the start options): a test should drop them.
//
// Every agent log line goes to stderr as
//   elastic-apm-node WARN: {"level":"warn","time":"...","message":"..."}
// (with a custom logger the agent passes the formatted message only, no structured fields).

const { parseArgs } = require('node:util')

const { values: args } = parseArgs({
  options: {
    'server-url': { type: 'string', default: process.env.APM_SERVER_URL || '' },
    service: { type: 'string', default: process.env.APM_SERVICE_NAME || 'apm-node-e2e' },
    'service-version': { type: 'string', default: process.env.APM_SERVICE_VERSION || '1.0.0' },
    requests: { type: 'string', default: process.env.REQUESTS || '1' },
    'interval-ms': { type: 'string', default: process.env.REQUEST_INTERVAL_MS || '0' },
    strict: { type: 'boolean', default: false },
  },
})
const requests = Number.parseInt(args.requests, 10)
const intervalMs = Number.parseInt(args['interval-ms'], 10)
if (!args['server-url']) {
  console.error('app.js: --server-url or APM_SERVER_URL is required')
  process.exit(2)
}
if (!(intervalMs >= 0)) {
  console.error('app.js: --interval-ms (REQUEST_INTERVAL_MS) must be a number of milliseconds')
  process.exit(2)
}
if (!(requests >= 1)) {
  console.error('app.js: --requests (REQUESTS) must be at least 1')
  process.exit(2)
}
const metricsInterval = process.env.APM_METRICS_INTERVAL || '1s'
const metricsMs = durationMs(metricsInterval)
if (!(metricsMs > 0)) {
  console.error(`app.js: APM_METRICS_INTERVAL ${JSON.stringify(metricsInterval)} is not a positive duration (e.g. 1s, 500ms)`)
  process.exit(2)
}

// durationMs reads a duration as the agent does: a number with the unit ms, s or m (s if none).
function durationMs (s) {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(String(s).trim())
  if (!m) return NaN
  return Number(m[1]) * ({ ms: 1, s: 1000, m: 60000 }[m[2] || 's'])
}

// The agent's logger: one JSON line per log record on stderr, prefixed with its level, at
// logLevel and above (with a custom logger the agent passes every record on, trace included).
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal']
const logLevel = process.env.APM_LOG_LEVEL || 'info'
const minLevel = logLevel === 'off' ? LEVELS.length : Math.max(0, LEVELS.indexOf({ warning: 'warn', critical: 'fatal' }[logLevel] || logLevel))
const logged = { error: 0, fatal: 0 }
const logger = {}
for (const [i, level] of LEVELS.entries()) {
  logger[level] = (msg, ...rest) => {
    if (level in logged) logged[level]++
    if (i < minLevel) return
    const message = [msg, ...rest].map((m) => (m instanceof Error ? (m.stack || m.message) : typeof m === 'string' ? m : JSON.stringify(m))).join(' ')
    process.stderr.write(`elastic-apm-node ${level.toUpperCase()}: ${JSON.stringify({ level, time: new Date().toISOString(), message })}\n`)
  }
}

const apmOptions = {
  serverUrl: args['server-url'],
  serviceName: args.service,
  serviceVersion: args['service-version'],
  environment: 'test',
  centralConfig: process.env.APM_CENTRAL_CONFIG === '1',
  cloudProvider: 'none',
  captureExceptions: false,
  metricsInterval,
  apiRequestTime: '1s',
  logLevel,
  logger,
}
if (process.env.APM_TRANSACTION_SAMPLE_RATE) apmOptions.transactionSampleRate = Number(process.env.APM_TRANSACTION_SAMPLE_RATE)
if (process.env.APM_SERVER_VERSION) apmOptions.apmServerVersion = process.env.APM_SERVER_VERSION
if (process.env.APM_SECRET_TOKEN) apmOptions.secretToken = process.env.APM_SECRET_TOKEN
if (process.env.APM_API_KEY) apmOptions.apiKey = process.env.APM_API_KEY

// The agent first, before http and express load.
const apm = require('elastic-apm-node').start(apmOptions)

const http = require('node:http')
const express = require('express')

// get makes a GET request with node:http and resolves with the status and the body.
function get (url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode, body }))
      res.on('error', reject)
    }).on('error', reject)
  })
}

// ids returns the ids of the current transaction, checked against apm.currentTraceIds.
function ids () {
  const tx = apm.currentTransaction
  if (!tx) throw new Error('no current transaction')
  const cur = apm.currentTraceIds
  if (cur['trace.id'] !== tx.traceId || cur['transaction.id'] !== tx.id) {
    throw new Error(`currentTraceIds ${JSON.stringify(cur)} disagree with the current transaction ${tx.traceId}/${tx.id}`)
  }
  return { trace_id: tx.traceId, transaction_id: tx.id, sampled: tx.sampled }
}

const app = express()
let base = ''

app.get('/backend', (req, res) => {
  // traceparent: version-traceid-parentid-flags; parentid is the caller's exit span.
  const parts = String(req.headers.traceparent || '').split('-')
  res.json({ ...ids(), parent_id: parts.length === 4 ? parts[2] : '' })
})

app.get('/users/:id', async (req, res, next) => {
  try {
    const own = ids()
    const r = await get(`${base}/backend?user=${encodeURIComponent(req.params.id)}`)
    const backend = JSON.parse(r.body)
    // An unsampled transaction makes no spans.
    const span = apm.startSpan('compute', 'app', 'internal')
    if (!span && own.sampled) throw new Error('apm.startSpan returned no span')
    let sum = 0
    for (let i = 0; i < 1000; i++) sum += i
    if (span) span.end()
    res.json({
      id: req.params.id,
      sum,
      ...own,
      http_span_id: backend.parent_id,
      backend_trace_id: backend.trace_id,
      backend_transaction_id: backend.transaction_id,
      compute_span_id: span ? span.id : '',
    })
  } catch (err) {
    next(err)
  }
})

app.get('/fail', (req, res) => {
  const own = ids()
  const err = new Error('handled failure')
  apm.captureError(err, (captureErr, errorId) => {
    if (captureErr) console.error('app.js: captureError:', captureErr.message)
  })
  res.status(500).json({ ...own, error: err.message })
})

function listen (server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)))
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

function exit (code) {
  process.stdout.write('', () => process.exit(code))
}

async function main () {
  const web = http.createServer(app)
  base = await listen(web)

  const lines = []
  for (let i = 1; i <= requests; i++) {
    if (i > 1 && intervalMs > 0) await sleep(intervalMs)
    for (const [route, path, want] of [['/users/:id', `/users/${i}`, 200], ['/fail', '/fail', 500]]) {
      const r = await get(base + path)
      let body
      try { body = JSON.parse(r.body) } catch { body = {} }
      if (r.status !== want || !body.trace_id || !body.transaction_id) {
        throw new Error(`GET ${path}: ${r.status} ${r.body}`)
      }
      const line = { route, path, status: r.status, trace_id: body.trace_id, transaction_id: body.transaction_id, sampled: body.sampled }
      if (route === '/users/:id') {
        Object.assign(line, {
          http_span_id: body.http_span_id,
          compute_span_id: body.compute_span_id,
          backend_transaction_id: body.backend_transaction_id,
        })
        if (body.backend_trace_id !== body.trace_id || !body.http_span_id) {
          throw new Error(`GET ${path}: /backend is not in the trace of its caller: ${r.body}`)
        }
      } else {
        line.error = body.error
      }
      lines.push(JSON.stringify(line))
    }
  }
  process.stdout.write(lines.join('\n') + '\n')

  // The metrics go out every metricsInterval: wait for one more than that.
  await sleep(metricsMs + 500)
  web.closeAllConnections()
  web.close()

  apm.flush((err) => {
    if (err) {
      console.error('app.js: apm.flush:', err.stack || err.message)
      exit(1)
      return
    }
    if (args.strict && logged.error + logged.fatal > 0) {
      console.error(`app.js: the agent logged ${logged.error} error(s) and ${logged.fatal} fatal record(s)`)
      exit(3)
      return
    }
    exit(0)
  })
}

main().catch((err) => {
  console.error('app.js:', err.stack || err.message)
  exit(1)
})
