package ddsampler

// Rejected tells whether a chunk of this sampling priority is dropped before any of the agent's
// samplers looks at it: below 0, the tracer rejected it (a user, a sampling rule or a manual
// drop), and no budget brings it back. The ddtrace receiver (drop_rejected_chunks) and the
// tracesampling processor (datadog.honour_priority) decide by it alike.
func Rejected(priority int64) bool { return priority < 0 }
