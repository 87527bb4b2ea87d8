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
		mode, _, _ := strings.Cut(v.Name, " ")
		if strings.Contains(v.Name, ",") {
			t.Errorf("variant %q: a comma makes it a pair of another variant's comparison", v.Name)
		}
		if v.Against != "" && !strings.HasPrefix(v.Against, mode+" ") {
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

// TestShippedSweep: make bench-shipped measures configs/default.yaml as shipped (overflow mode,
// no --set, no environment: the binary's own GC defaults) against stock, each tracegate run
// against a stock run of the same round.
func TestShippedSweep(t *testing.T) {
	vs, err := loadSweep(filepath.Join("..", "configs", "shipped.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tracegateRuns := 0
	for _, v := range vs {
		if v.Collector != "tracegate" {
			continue
		}
		tracegateRuns++
		if v.Mode != "overflow" || len(v.Set) > 0 || len(v.Env) > 0 || len(v.Overlays) > 0 {
			t.Errorf("variant %q is not configs/default.yaml as shipped", v.Name)
		}
		if !strings.HasPrefix(v.Against, "stock") {
			t.Errorf("variant %q is compared with %q, not stock", v.Name, v.Against)
		}
	}
	if tracegateRuns < 2 {
		t.Errorf("%d tracegate runs: want two rounds at least", tracegateRuns)
	}
}
