package bufferprocessor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const crashDirEnv = "BUFFERPROCESSOR_CRASH_CHILD_DIR"

// TestReplayAfterSIGKILL runs a child process (this test binary) that acknowledges batches in
// write_ahead mode while its next consumer hangs, kills it with SIGKILL, and checks that a new
// processor on the same directory delivers every acknowledged span, with the possible duplicates
// counted and bounded by the deliveries that were in flight (threads).
func TestReplayAfterSIGKILL(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(t, dir)
		return
	}
	const batches, per, threads = 200, 10, 4
	dir := t.TempDir()
	// The context bounds a child that never reports (it is killed and its pipe closes, which ends
	// the scan below); the cleanup makes sure no child outlives the test.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestReplayAfterSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, fmt.Sprintf("BUFFERPROCESSOR_CRASH_N=%d", batches))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	acked := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "ACKED ") {
			_, err := fmt.Sscanf(line, "ACKED %d", &acked)
			require.NoError(t, err)
			break
		}
	}
	require.Equal(t, batches, acked, "child did not acknowledge its batches (or timed out)")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait() // "signal: killed" is the expected outcome; the cleanup's Wait then returns at once

	rec := newRecorder()
	cfg := diskCfg(dir, ModeWriteAhead, FsyncInterval)
	cfg.Threads = threads
	h := start(t, cfg, rec, nil)
	rec.waitDistinct(t, batches*per)
	h.shutdown(t)
	rec.checkAll(t, rangeIDs(0, batches*per))
	assert.Equal(t, int64(batches), h.sum(t, "processor_buffer_replayed_batches", ""))
	dups := h.sum(t, "processor_buffer_duplicates_possible_batches", "")
	assert.Positive(t, dups, "the hung deliveries were in flight")
	assert.LessOrEqual(t, dups, int64(threads))
}

// crashChild acknowledges batches, reports it, then waits to be killed.
func crashChild(t *testing.T, dir string) {
	var n int
	_, err := fmt.Sscanf(os.Getenv("BUFFERPROCESSOR_CRASH_N"), "%d", &n)
	require.NoError(t, err)
	rec := newRecorder()
	rec.gate = make(chan struct{})                  // Elasticsearch hangs: deliveries stay in flight
	cfg := diskCfg(dir, ModeWriteAhead, FsyncNever) // SIGKILL keeps the page cache: even "never" survives it
	cfg.Threads = 4
	h := start(t, cfg, rec, nil)
	for i := range n {
		require.NoError(t, h.p.ConsumeTraces(context.Background(), makeTraces(rangeIDs(i*10, 10)...)))
	}
	// At least one delivery must have started (and so been marked dispatched) before the kill, or
	// the duplicates-possible assertion races with the workers on a loaded machine.
	rec.waitFirstCall(t)
	fmt.Printf("ACKED %d\n", n)
	select {} // killed here
}
