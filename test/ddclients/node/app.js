'use strict'

// app.js is a small traced web application: dd-trace with its integrations on (http, express), an
// express server with the route /users/:id (and /fail/:id), and an inventory service it calls over
// HTTP. The program itself sends the requests, so each one makes a trace of three spans as a real
// application would: the express server span (express.request), the outgoing HTTP client span
// (http.request, child of the server span) and the inventory server's span (web.request, child of
// the client span, through the propagation headers).
//
// GET /fail/:id does the same call, then throws an error that it catches, records it on the
// request's span as a handled error (span.setTag('error', err)) and answers 500.
//
// It prints one JSON line per request (see the README), sends the traces to the intake when it
// exits (dd-trace's beforeExit handler), and exits non-zero if the tracer logged an error or the
// intake answered no payload.
//
//   DD_TRACE_AGENT_URL=http://127.0.0.1:8126 DD_TRACE_AGENT_PROTOCOL_VERSION=0.5 \
//     node app.js --service shop --requests 5
//
// DDJS_SEND_DEBUG=1 echoes the tracer's debug log to stderr.

const { parseArgs } = require('node:util')

const { values: args } = parseArgs({
  options: {
    'agent-url': { type: 'string', default: process.env.DD_TRACE_AGENT_URL || '' },
    service: { type: 'string', default: process.env.DD_SERVICE || 'ddjs-app' },
    requests: { type: 'string', default: '5' },
    failures: { type: 'string', default: '1' },
  },
})
const requests = Number.parseInt(args.requests, 10)
const failures = Number.parseInt(args.failures, 10)
if (!args['agent-url']) {
  console.error('app.js: --agent-url or DD_TRACE_AGENT_URL is required')
  process.exit(2)
}
if (!(requests >= 1) || !(failures >= 0)) {
  console.error('app.js: --requests must be at least 1, --failures at least 0')
  process.exit(2)
}

const logger = require('./quiet').quietTracerLogger('app.js')

// The tracer first, so that its integrations hook http and express when they load.
const tracer = require('dd-trace').init({
  url: args['agent-url'],
  service: args.service,
  logger,
  startupLogs: false,
  runtimeMetrics: false,
})
// One span per request, not one per middleware as well: the handler's active span is then the
// request's span, where the handled error belongs.
tracer.use('express', { middleware: false })
// The program's own requests to the web server are the world outside the application: neither
// traced nor carrying trace headers, so the express span is the root of its trace.
let webBase = ''
const external = (uri) => webBase !== '' && uri.startsWith(webBase + '/')
tracer.use('http', { client: { blocklist: external, propagationBlocklist: external } })
// No spans for name lookups and TCP connections: how many there are depends on which connections
// the agent pool reuses, and the test wants the same spans on every run.
tracer.use('dns', false)
tracer.use('net', false)

const http = require('node:http')
const express = require('express')


const ids = (span) => ({ trace_id: span.context().toTraceId(true), span_id: span.context().toSpanId(true) })

// The inventory service: a plain node:http server (traced by the http integration). It answers
// with the ids of its own span and of its caller's, the client span (W3C traceparent:
// version-traceid-parentid-flags), so the program can name both.
const inventory = http.createServer((req, res) => {
  const span = tracer.scope().active()
  const parts = String(req.headers.traceparent || '').split('-')
  res.setHeader('content-type', 'application/json')
  res.end(JSON.stringify({
    sku: req.url.split('/').pop(),
    parent_id: parts.length === 4 ? parts[2] : '',
    ...(span ? ids(span) : {}),
  }))
})

// get makes a GET request with node:http and resolves with the response and its body.
function get (url, headers = {}) {
  return new Promise((resolve, reject) => {
    http.get(url, { headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode, body }))
      res.on('error', reject)
    }).on('error', reject)
  })
}

const app = express()
let inventoryURL = ''

async function lookup (req) {
  const span = tracer.scope().active()
  const r = await get(`${inventoryURL}/stock/${encodeURIComponent(req.params.id)}`)
  const stock = JSON.parse(r.body)
  return { server: ids(span), inventory: stock }
}

app.get('/users/:id', async (req, res) => {
  const out = await lookup(req)
  res.json({ id: req.params.id, ...out })
})

app.get('/fail/:id', async (req, res) => {
  const out = await lookup(req)
  const span = tracer.scope().active()
  try {
    throw new Error(`user ${req.params.id} is locked`)
  } catch (err) {
    span.setTag('error', err)
    res.status(500).json({ id: req.params.id, ...out, error: err.message })
  }
})

function listen (server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`)))
}

async function main () {
  inventoryURL = await listen(inventory)
  const web = http.createServer(app)
  const base = await listen(web)
  webBase = base

  // Every request has a query string, for url.query.
  const query = 'lang=en'
  const lines = []
  const plan = []
  for (let i = 0; i < requests; i++) plan.push(`/users/${i + 1}`)
  for (let i = 0; i < failures; i++) plan.push(`/fail/${requests + i + 1}`)
  for (const path of plan) {
    const r = await get(base + path + '?' + query, { 'user-agent': 'tracegate-e2e/1.0' })
    const body = JSON.parse(r.body)
    if (!body.server || !body.inventory || !body.inventory.span_id || !body.inventory.parent_id) {
      throw new Error(`GET ${path}: ${r.status} ${r.body}`)
    }
    lines.push(JSON.stringify({
      trace_id: body.server.trace_id,
      server_span_id: body.server.span_id,
      client_span_id: body.inventory.parent_id,
      downstream_span_id: body.inventory.span_id,
      downstream_trace_id: body.inventory.trace_id,
      method: 'GET',
      path,
      route: path.startsWith('/fail/') ? '/fail/:id' : '/users/:id',
      status: r.status,
      error: body.error || '',
      url: base + path + '?' + query,
      url_query: query,
      downstream_url: `${inventoryURL}/stock/${path.split('/').pop()}`,
    }))
  }
  web.close()
  inventory.close()
  web.closeAllConnections()
  inventory.closeAllConnections()
  process.stdout.write(lines.join('\n') + '\n')
}

main().catch((err) => {
  console.error('app.js:', text(err))
  process.exitCode = 1
})
