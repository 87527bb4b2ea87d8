package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGCSweep: every variant of make bench-gc sets GOGC itself (so the binary's own GC defaults,
// applied only when neither GOGC nor GOMEMLIMIT is set, never decide a row), and each is compared
// with Go's default in its own mode.
func TestGCSweep(t *testing.T) {
	vs, err := loadSweep(filepath.Join("..", "configs", "gc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		hasGOGC := false
		for _, kv := range v.Env {
			hasGOGC = hasGOGC || strings.HasPrefix(kv, "GOGC=")
		}
		if !hasGOGC {
			t.Errorf("variant %q does not set GOGC", v.Name)
		}
		mode, _, _ := strings.Cut(v.Name, ",")
		if v.Against != "" && !strings.HasPrefix(v.Against, mode+",") {
			t.Errorf("variant %q is compared with %q, another mode", v.Name, v.Against)
		}
	}
}

// TestSweepEnvMustBeKeyValue: a variant's env entry without "=" or without a key is refused.
func TestSweepEnvMustBeKeyValue(t *testing.T) {
	for _, env := range []string{"GOGC", "=400"} {
		path := filepath.Join(t.TempDir(), "sweep.yaml")
		body := "variants:\n  - {name: a, collector: tracegate, mode: memory, env: [\"" + env + "\"]}\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadSweep(path); err == nil || !strings.Contains(err.Error(), "KEY=VALUE") {
			t.Errorf("env %q: error %v, want one about KEY=VALUE", env, err)
		}
	}
}
