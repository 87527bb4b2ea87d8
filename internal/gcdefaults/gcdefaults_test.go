package gcdefaults

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestChoose(t *testing.T) {
	def := Defaults{GOGC: 400, LimitShare: 0.9}
	const gib = int64(1) << 30
	for _, tc := range []struct {
		name   string
		env    map[string]string
		cgroup int64
		want   Decision
		line   string
	}{
		{
			"nothing set, container limit", nil, 2 * gib,
			Decision{GOGC: 400, MemoryLimit: 2 * gib * 9 / 10, CgroupLimit: 2 * gib},
			"GOGC=400 GOMEMLIMIT=1843MiB (90% of the cgroup memory limit 2048MiB)",
		},
		{"nothing set, no limit", nil, 0, Decision{GOGC: 400}, "GOGC=400, no GOMEMLIMIT (no cgroup memory limit)"},
		{"GOGC set", map[string]string{"GOGC": "100"}, 2 * gib, Decision{FromEnvironment: true}, "GOGC/GOMEMLIMIT from the environment"},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, 2 * gib, Decision{FromEnvironment: true}, "GOGC/GOMEMLIMIT from the environment"},
		{"GOGC set empty still counts as set", map[string]string{"GOGC": ""}, 0, Decision{FromEnvironment: true}, "GOGC/GOMEMLIMIT from the environment"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			got := Choose(lookup, tc.cgroup, def)
			if got != tc.want {
				t.Fatalf("Choose = %+v, want %+v", got, tc.want)
			}
			if got.String() != tc.line {
				t.Fatalf("String = %q, want %q", got.String(), tc.line)
			}
		})
	}
}

func TestCgroupMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"v2 limit", map[string]string{"memory.max": "2147483648\n"}, 2147483648},
		{"v2 no limit", map[string]string{"memory.max": "max\n"}, 0},
		{"v1 limit", map[string]string{"memory/memory.limit_in_bytes": "1073741824\n"}, 1073741824},
		{"v1 no limit", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0},
		{"v2 wins over v1", map[string]string{"memory.max": "536870912", "memory/memory.limit_in_bytes": "1073741824"}, 536870912},
		{"garbage", map[string]string{"memory.max": "lots"}, 0},
		{"no cgroup files", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for name, content := range tc.files {
				p := filepath.Join(root, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := CgroupMemoryLimit(root); got != tc.want {
				t.Fatalf("CgroupMemoryLimit = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestApply: a decision sets the runtime's GC percentage and memory limit; one from the
// environment leaves both as they were.
func TestApply(t *testing.T) {
	prevGC := debug.SetGCPercent(100)
	prevLimit := debug.SetMemoryLimit(-1)
	t.Cleanup(func() {
		debug.SetGCPercent(prevGC)
		debug.SetMemoryLimit(prevLimit)
	})

	Apply(Decision{FromEnvironment: true})
	if got := debug.SetGCPercent(-1); got != 100 {
		t.Fatalf("a decision from the environment changed GOGC to %d", got)
	}
	debug.SetGCPercent(100)

	Apply(Decision{GOGC: 400, MemoryLimit: 1 << 30})
	if got := debug.SetGCPercent(100); got != 400 {
		t.Fatalf("GOGC = %d, want 400", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Fatalf("GOMEMLIMIT = %d, want %d", got, 1<<30)
	}
}
