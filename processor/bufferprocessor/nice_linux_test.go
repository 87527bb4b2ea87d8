//go:build linux

package bufferprocessor

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// threadNice reads the calling thread's nice value from /proc (field 19 of its stat line).
func threadNice(t *testing.T) int {
	b, err := os.ReadFile("/proc/thread-self/stat")
	require.NoError(t, err)
	// The command name (field 2) may hold spaces; fields are counted after its closing parenthesis.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	nice, err := strconv.Atoi(fields[16]) // field 19 overall: state is field 3, i.e. fields[0]
	require.NoError(t, err)
	return nice
}

// niceRecorder records the nice value of the thread each delivery runs on.
type niceRecorder struct {
	t     *testing.T
	mu    sync.Mutex
	nices []int
}

func (r *niceRecorder) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r *niceRecorder) ConsumeTraces(_ context.Context, _ ptrace.Traces) error {
	n := threadNice(r.t)
	r.mu.Lock()
	r.nices = append(r.nices, n)
	r.mu.Unlock()
	return nil
}

// TestWorkerNice: deliveries run on threads worker_nice steps below the process's priority, and
// with 0 at the process's own priority; the caller's thread is never changed.
func TestWorkerNice(t *testing.T) {
	base := threadNice(t)
	for _, nice := range []int{0, 7} {
		t.Run(strconv.Itoa(nice), func(t *testing.T) {
			cfg := memCfg()
			cfg.WorkerNice, cfg.Threads = nice, 4
			rec := &niceRecorder{t: t}
			h := start(t, cfg, rec, nil)
			for i := range 20 {
				require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(i)))
			}
			h.shutdown(t)
			require.NotEmpty(t, rec.nices)
			want := min(base+nice, 19)
			for _, n := range rec.nices {
				assert.Equal(t, want, n)
			}
			assert.Equal(t, base, threadNice(t), "the test's own thread keeps its priority")
		})
	}
}
