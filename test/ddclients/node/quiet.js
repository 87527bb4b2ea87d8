'use strict'

// quiet.js is what send.js and app.js share: a tracer that sends traces only, and a logger that
// keeps the tracer's debug lines to itself, echoes its warnings and errors, and makes the program
// exit non-zero if the tracer logged an error or no trace payload was answered.
//
// The tracer logs only in debug mode, and a program sees its errors and the intake's answers only
// through its log. DDJS_SEND_DEBUG=1 echoes the debug log to stderr.

// Everything but traces off, unless the environment already says otherwise.
const quietDefaults = {
  DD_TRACE_STARTUP_LOGS: 'false',
  DD_RUNTIME_METRICS_ENABLED: 'false',
  DD_INSTRUMENTATION_TELEMETRY_ENABLED: 'false',
  DD_TRACE_STATS_COMPUTATION_ENABLED: 'false',
  DD_REMOTE_CONFIGURATION_ENABLED: 'false',
  DD_DATA_STREAMS_ENABLED: 'false',
  DD_TRACE_SAMPLE_RATE: '1',
}

// quietTracerLogger sets the environment up (call it before requiring dd-trace) and returns the
// logger to give dd-trace's init; program names the program in its exit messages.
function quietTracerLogger (program) {
  for (const [k, v] of Object.entries(quietDefaults)) {
    if (process.env[k] === undefined) process.env[k] = v
  }
  process.env.DD_TRACE_DEBUG = 'true'
  process.env.DD_TRACE_LOG_LEVEL = 'debug'

  const errors = []
  let responses = 0
  const debug = process.env.DDJS_SEND_DEBUG === '1'
  const text = (m) => (m instanceof Error ? (m.stack || m.message) : String(m))
  process.on('exit', (code) => {
    if (code !== 0) return
    if (errors.length > 0) {
      console.error(`${program}: the tracer logged ${errors.length} error(s), first: ${errors[0]}`)
      process.exitCode = 1
    } else if (responses === 0) {
      console.error(`${program}: the intake answered no trace payload`)
      process.exitCode = 1
    }
  })
  return {
    debug: (m) => {
      if (text(m).startsWith('Response from the agent')) responses++
      if (debug) console.error('dd-trace DEBUG:', text(m))
    },
    info: (m) => {
      if (debug) console.error('dd-trace INFO:', text(m))
    },
    warn: (m) => console.error('dd-trace WARN:', text(m)),
    error: (m) => {
      const msg = text(m)
      errors.push(msg)
      console.error('dd-trace ERROR:', msg)
    },
  }
}

module.exports = { quietTracerLogger }
