package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
)

func TestParseStatTicks(t *testing.T) {
	tests := []struct {
		name, stat string
		want       uint64
		wantErr    bool
	}{
		{"plain", "1234 (tracegate) S 1 1234 1234 0 -1 4194560 5000 0 0 0 250 75 0 0 20 0 9 0 100 0 0", 325, false},
		{"name with spaces and parens", "99 (my (odd) name) R 1 99 99 0 -1 0 0 0 0 0 7 3 0 0 20 0 1 0 5 0 0", 10, false},
		{"truncated", "99 (x) R 1 2", 0, true},
		{"no parens", "garbage", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatTicks(tt.stat)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStatTicks = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseVmHWM(t *testing.T) {
	tests := []struct {
		name, status string
		want         uint64
		wantErr      bool
	}{
		{"present", "Name:\ttracegate\nVmPeak:\t 2000000 kB\nVmHWM:\t  587264 kB\nVmRSS:\t  500000 kB\n", 587264, false},
		{"missing", "Name:\tx\nVmRSS:\t 1 kB\n", 0, true},
		{"bad unit", "VmHWM:\t 12 MB\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseVmHWM(bufio.NewScanner(strings.NewReader(tt.status)))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseVmHWM = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestReplaceSection(t *testing.T) {
	sec := SectionHeading + "\n\nnew table\n"
	tests := []struct{ name, doc, want string }{
		{"empty file", "", "# Benchmarks\n\n" + sec},
		{"appended after other sections", "# Benchmarks\n\n## Go micro-benchmarks\n\nx\n", "# Benchmarks\n\n## Go micro-benchmarks\n\nx\n\n" + sec},
		{"replaced, later section kept", "# B\n\n" + SectionHeading + "\n\nold\nold\n\n## Go micro-benchmarks\n\nx\n",
			"# B\n\n" + sec + "\n## Go micro-benchmarks\n\nx\n"},
		{"replaced at the end, earlier section kept", "# B\n\n## Other\n\ny\n\n" + SectionHeading + "\n\nold\n", "# B\n\n## Other\n\ny\n\n" + sec},
		{"subsections belong to the section", "# B\n\n" + SectionHeading + "\n\nold\n\n### sweep\n\nold\n", "# B\n\n" + sec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replaceSection(tt.doc, sec); got != tt.want {
				t.Errorf("replaceSection =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestOverlayMovesEveryListener checks the port overlay: stock gets no ddtrace receiver (it has
// none), the shipped configs get their extra listeners moved too, and every address is loopback.
func TestOverlayMovesEveryListener(t *testing.T) {
	tests := []struct {
		coll, cfg              string
		wantDDTrace, wantExtra bool
	}{
		{"tracegate", "configs/default.yaml", true, true},
		{"tracegate", "configs/bench/tracegate-memory.yaml", true, false},
		{"stock", "configs/bench/stock.yaml", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.coll+" "+tt.cfg, func(t *testing.T) {
			ports, b, err := overlayFor(tt.coll, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Receivers  map[string]json.RawMessage `json:"receivers"`
				Extensions map[string]json.RawMessage `json:"extensions"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			_, dd := m.Receivers["ddtrace"]
			_, zp := m.Extensions["zpages"]
			if dd != tt.wantDDTrace || zp != tt.wantExtra || strings.Contains(string(b), "thrift_binary") != tt.wantExtra {
				t.Errorf("overlay %s", b)
			}
			if strings.Contains(string(b), "0.0.0.0") || ports.target("otlp-http") == "" || ports.health == "" {
				t.Errorf("overlay %s, ports %+v", b, ports)
			}
		})
	}
}
