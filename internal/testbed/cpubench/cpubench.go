// Package cpubench is what the CPU-per-item benchmarks share, those of the buffer and those of
// whole trace paths: a fake Elasticsearch bulk responder run in a child process (so that its CPU
// is not counted in the collector's), the process's CPU time, producers that send a pool of
// batches from several goroutines, and a counter that waits for the items a consumer accepted.
package cpubench

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Producers is how many goroutines Produce sends from (the benchmarks give the buffer as many
// threads).
const Producers = 8

// fakeESEnv tells a test binary started by StartFakeES that it is the child.
const fakeESEnv = "TRACEGATE_FAKE_ES_PROCESS"

// StartFakeES runs the fake bulk responder (FakeESHandler) in a child process, this test binary
// run with -test.run=^TestFakeElasticsearchProcess$, and returns its URL. The calling package
// must have that test, calling ServeFakeES.
func StartFakeES(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeElasticsearchProcess$")
	cmd.Env = append(os.Environ(), fakeESEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return strings.TrimSpace(url)
}

// ProcessCPU is the user + system CPU time of this process.
func ProcessCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Produce sends n batches from pool (round robin) to consume from Producers goroutines. An error
// for which retry is true (a full buffer) is retried after a millisecond, as a client retries a
// 429; any other fails the benchmark.
func Produce[T any](b *testing.B, consume func(context.Context, T) error, pool []T, n int, retry func(error) bool) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range Producers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				for {
					err := consume(context.Background(), pool[i%int64(len(pool))])
					if err == nil {
						break
					}
					if !retry(err) {
						b.Error(err)
						return
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
}

// Counter counts the items its next consumer accepted; Wait blocks until a count is reached.
type Counter[T any] struct {
	itemsOf func(T) int64
	next    func(context.Context, T) error
	mu      sync.Mutex
	cond    *sync.Cond
	items   int64
}

// NewCounter counts with itemsOf what next accepts.
func NewCounter[T any](itemsOf func(T) int64, next func(context.Context, T) error) *Counter[T] {
	c := &Counter[T]{itemsOf: itemsOf, next: next}
	c.cond = sync.NewCond(&c.mu)
	return c
}

// Consume hands data to next and counts its items if next accepted them.
func (c *Counter[T]) Consume(ctx context.Context, data T) error {
	n := c.itemsOf(data)
	if err := c.next(ctx, data); err != nil {
		return err
	}
	c.mu.Lock()
	c.items += n
	c.cond.Broadcast()
	c.mu.Unlock()
	return nil
}

// Count is how many items next accepted so far.
func (c *Counter[T]) Count() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items
}

// Wait blocks until next accepted want items in all.
func (c *Counter[T]) Wait(want int64) {
	c.mu.Lock()
	for c.items < want {
		c.cond.Wait()
	}
	c.mu.Unlock()
}

// TracesCounter is a traces consumer that counts the spans its next consumer accepted: the last
// stage of a benchmark's pipeline, which Wait tells when every span went through.
type TracesCounter struct {
	next consumer.Traces
	*Counter[ptrace.Traces]
}

// NewTracesCounter counts the spans next accepts.
func NewTracesCounter(next consumer.Traces) *TracesCounter {
	spans := func(td ptrace.Traces) int64 { return int64(td.SpanCount()) }
	return &TracesCounter{next: next, Counter: NewCounter(spans, next.ConsumeTraces)}
}

// Capabilities are next's.
func (c *TracesCounter) Capabilities() consumer.Capabilities { return c.next.Capabilities() }

// ConsumeTraces hands td to next and counts its spans if next accepted them.
func (c *TracesCounter) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	return c.Consume(ctx, td)
}
