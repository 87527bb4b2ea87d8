// Package gcdefaults chooses the Go garbage collector's settings tracegate runs with when the
// user set neither GOGC nor GOMEMLIMIT: a GOGC above Go's 100 (fewer collections per span, more
// heap; docs/benchmarks.md, "GC sweep") and, when the process runs under a cgroup memory limit (a
// container's), a GOMEMLIMIT at a share of it, so that the collector collects harder as it nears
// the limit instead of being killed. A user who sets either variable gets exactly what they set:
// the Go runtime has applied it before any of our code runs.
package gcdefaults

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// Defaults are the settings applied when the environment sets neither variable.
type Defaults struct {
	// GOGC is the heap growth percentage between collections (Go's default is 100).
	GOGC int
	// LimitShare is GOMEMLIMIT as a share of the cgroup memory limit (0 < share ≤ 1). The chart
	// sets GOMEMLIMIT at the same share of resources.limits.memory itself.
	LimitShare float64
}

// Chosen are tracegate's defaults, from the GC sweep at the Datakit load (docs/benchmarks.md).
// LimitShare is 0.9, as the chart's: above memory_limiter's 80 % (of the heap in use), so that the
// limiter refuses data before the collector runs flat out to hold the limit.
var Chosen = Defaults{GOGC: 400, LimitShare: 0.9}

// Decision is what the process runs with, and why, for the ready line.
type Decision struct {
	// FromEnvironment is true when the user set GOGC or GOMEMLIMIT: nothing was changed.
	FromEnvironment bool
	// GOGC is the percentage applied (0 when FromEnvironment).
	GOGC int
	// MemoryLimit is the GOMEMLIMIT applied in bytes, 0 for none.
	MemoryLimit int64
	// CgroupLimit is the cgroup memory limit read, 0 for none.
	CgroupLimit int64
}

// String is the decision as the ready line shows it.
func (d Decision) String() string {
	switch {
	case d.FromEnvironment:
		return "GOGC/GOMEMLIMIT from the environment"
	case d.MemoryLimit > 0:
		return fmt.Sprintf("GOGC=%d GOMEMLIMIT=%dMiB (%.0f%% of the cgroup memory limit %dMiB)", d.GOGC,
			d.MemoryLimit>>20, 100*float64(d.MemoryLimit)/float64(d.CgroupLimit), d.CgroupLimit>>20)
	default:
		return fmt.Sprintf("GOGC=%d, no GOMEMLIMIT (no cgroup memory limit)", d.GOGC)
	}
}

// Choose decides from the environment (lookup is os.LookupEnv in production) and the cgroup
// memory limit (0: none), without applying anything.
func Choose(lookup func(string) (string, bool), cgroupLimit int64, def Defaults) Decision {
	if _, ok := lookup("GOGC"); ok {
		return Decision{FromEnvironment: true}
	}
	if _, ok := lookup("GOMEMLIMIT"); ok {
		return Decision{FromEnvironment: true}
	}
	d := Decision{GOGC: def.GOGC, CgroupLimit: cgroupLimit}
	if cgroupLimit > 0 && def.LimitShare > 0 {
		d.MemoryLimit = int64(float64(cgroupLimit) * def.LimitShare)
	}
	return d
}

// Apply sets what d decided; a decision from the environment changes nothing.
func Apply(d Decision) {
	if d.FromEnvironment {
		return
	}
	debug.SetGCPercent(d.GOGC)
	if d.MemoryLimit > 0 {
		debug.SetMemoryLimit(d.MemoryLimit)
	}
}

// ApplyDefaults chooses with Chosen from this process's environment and cgroup, and applies.
func ApplyDefaults() Decision {
	d := Choose(os.LookupEnv, CgroupMemoryLimit("/sys/fs/cgroup"), Chosen)
	Apply(d)
	return d
}

// CgroupMemoryLimit reads the memory limit of the cgroup this process runs in under root (the
// cgroup file system's mount point): cgroup v2's memory.max, else v1's
// memory/memory.limit_in_bytes. It returns 0 when there is no limit or it cannot be read: "max",
// or v1's page-rounded maximum, means none.
func CgroupMemoryLimit(root string) int64 {
	for _, p := range []string{filepath.Join(root, "memory.max"), filepath.Join(root, "memory", "memory.limit_in_bytes")} {
		b, err := os.ReadFile(p) //nolint:gosec // a cgroup file under the given mount point, not user input
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0
		}
		n, err := strconv.ParseInt(s, 10, 64)
		// cgroup v1 writes "no limit" as the largest page-aligned int64.
		if err != nil || n <= 0 || n >= math.MaxInt64&^(1<<12-1) {
			return 0
		}
		return n
	}
	return 0
}
