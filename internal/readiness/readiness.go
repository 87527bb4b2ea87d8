// Package readiness carries what a component tells the operator once tracegate is ready: a
// receiver the address it listens on, a buffer how it keeps what it holds. A component reports in
// Start to every extension of its host that is a Board (the readylog extension, which prints the
// reports in its ready line); with none the report goes nowhere. The reports say what only the
// started component knows (the address bound once port 0 is resolved, the defaults applied), so
// nothing reads it back out of the configuration.
package readiness

import "go.opentelemetry.io/collector/component"

// ModeMemory is the Buffer mode of a buffer without storage.
const ModeMemory = "memory"

// Listener is an address a receiver listens on.
type Listener struct {
	// ID is the receiver's.
	ID component.ID
	// Addr is the address bound (a port 0 resolved), or a Unix socket's path.
	Addr string
}

// Buffer is how a buffer processor keeps what it holds.
type Buffer struct {
	// ID is the processor's.
	ID component.ID
	// Mode is ModeMemory without storage, else the storage mode (overflow, write_ahead).
	Mode string
	// Directory is the storage directory; empty in memory.
	Directory string
}

// Board takes the reports. A component may report the same fact more than once (a processor
// runs once per signal), so a Board keeps one of each per ID.
type Board interface {
	Listening(Listener)
	Buffering(Buffer)
}

// ReportListener tells every Board among host's extensions that a receiver listens on l.
func ReportListener(host component.Host, l Listener) {
	for _, b := range boards(host) {
		b.Listening(l)
	}
}

// ReportBuffer tells every Board among host's extensions how a buffer keeps what it holds.
func ReportBuffer(host component.Host, b Buffer) {
	for _, board := range boards(host) {
		board.Buffering(b)
	}
}

func boards(host component.Host) []Board {
	var out []Board
	for _, ext := range host.GetExtensions() {
		if b, ok := ext.(Board); ok {
			out = append(out, b)
		}
	}
	return out
}
