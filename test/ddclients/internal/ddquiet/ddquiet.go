// Package ddquiet is what the Go programs of test/ddclients share: a tracer logger that remembers
// errors, and the environment that keeps dd-trace-go talking to the intake about traces only.
package ddquiet

import (
	"fmt"
	"maps"
	"os"
	"strings"
	"sync"
	"syscall"
)

// Logger keeps what the tracer logs, echoes it to stderr and remembers errors.
type Logger struct {
	mu     sync.Mutex
	errors []string
}

// Log implements the tracer's logger interface.
func (l *Logger) Log(msg string) {
	msg = strings.TrimRight(msg, "\n")
	fmt.Fprintln(os.Stderr, msg)
	// dd-trace-go prefixes every line with "Datadog Tracer <version> <LEVEL>: ".
	if strings.Contains(msg, " ERROR: ") {
		l.mu.Lock()
		l.errors = append(l.errors, msg)
		l.mu.Unlock()
	}
}

// Errors are the error lines the tracer logged so far.
func (l *Logger) Errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errors...)
}

// Defaults switches off everything but traces, unless the environment already says otherwise.
// dd-trace-go reads some of them while its packages initialize (telemetry, for one), before main
// runs, so Apply re-executes the program with them set rather than calling os.Setenv.
var Defaults = map[string]string{
	"DD_TRACE_STARTUP_LOGS":                "false",
	"DD_RUNTIME_METRICS_ENABLED":           "false",
	"DD_INSTRUMENTATION_TELEMETRY_ENABLED": "false",
	"DD_TRACE_STATS_COMPUTATION_ENABLED":   "false",
	"DD_REMOTE_CONFIGURATION_ENABLED":      "false",
	"DD_DATA_STREAMS_ENABLED":              "false",
	"DD_TRACE_SAMPLE_RATE":                 "1",
}

// Apply re-executes the program with the missing Defaults in its environment; it returns only when
// none is missing. program names the program in its error message.
func Apply(program string) { apply(program, Defaults) }

// ApplyAgentSampling is Apply without DD_TRACE_SAMPLE_RATE: with no sampling rule the tracer
// decides each trace by the rates the intake replies with (priority 1 or 0), instead of keeping
// every trace by rule (priority 2).
func ApplyAgentSampling(program string) {
	defaults := maps.Clone(Defaults)
	delete(defaults, "DD_TRACE_SAMPLE_RATE")
	apply(program, defaults)
}

func apply(program string, defaults map[string]string) {
	env := os.Environ()
	missing := false
	for k, v := range defaults {
		if _, set := os.LookupEnv(k); !set {
			env = append(env, k+"="+v)
			missing = true
		}
	}
	if !missing {
		return
	}
	exe, err := os.Executable()
	if err == nil {
		err = syscall.Exec(exe, os.Args, env)
	}
	fmt.Fprintln(os.Stderr, program+": re-executing with the tracer's settings:", err)
	os.Exit(1)
}

// EnvOr is the environment variable k, or def when it is empty.
func EnvOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
