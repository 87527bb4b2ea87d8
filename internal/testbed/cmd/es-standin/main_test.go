package main

import (
	"strings"
	"testing"
)

// TestRunRefusesContradictoryFlags: flags that cannot work together fail before anything listens.
func TestRunRefusesContradictoryFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"count-only with record", []string{"-listen", "127.0.0.1:0", "-count-only", "-record", t.TempDir() + "/docs.jsonl"}, "CountOnly excludes"},
		{"bad faults", []string{"-listen", "127.0.0.1:0", "-faults", "{"}, "-faults"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(tt.args)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}
