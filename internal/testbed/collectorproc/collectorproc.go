// Package collectorproc runs a built collector binary as a child process for end-to-end tests, the
// demo and benchmarks: start it, wait until its health check answers, keep its log, stop it.
package collectorproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options describe one collector process.
type Options struct {
	Binary string
	Args   []string // e.g. --config configs/default.yaml
	Env    []string // added to the current environment
	// HealthURL is polled until it answers 200, e.g. http://127.0.0.1:13133/.
	HealthURL string
	// StartTimeout bounds the wait for the health check (default 30s).
	StartTimeout time.Duration
}

// Process is a running collector.
type Process struct {
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
	err  error // set when the process exits, before done is closed
}

// Start starts the binary and waits for its health check. On failure the error carries the log.
func Start(ctx context.Context, o Options) (*Process, error) {
	if _, err := os.Stat(o.Binary); err != nil {
		return nil, fmt.Errorf("collector binary %s: %w (run `make build` first)", o.Binary, err)
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 30 * time.Second
	}
	if o.HealthURL != "" {
		// A health check that answers before we started belongs to another process, which would
		// make every later check meaningless.
		if resp, err := http.Get(o.HealthURL); err == nil {
			resp.Body.Close()
			return nil, fmt.Errorf("%s already answers: another collector is running on that port: %w", o.HealthURL, ErrPortTaken)
		}
	}
	p := &Process{log: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(o.Binary, o.Args...)
	p.cmd.Env = append(os.Environ(), o.Env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	if o.HealthURL == "" {
		return p, nil
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, o.HealthURL, http.NoBody)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.done:
			err := fmt.Errorf("collector exited before it was healthy (%w); log:\n%s", p.err, p.Log())
			if strings.Contains(p.Log(), "address already in use") {
				err = fmt.Errorf("%w: %w", ErrPortTaken, err)
			}
			return nil, err
		case <-ctx.Done():
			_ = p.Kill()
			return nil, fmt.Errorf("collector not healthy at %s within %s; log:\n%s", o.HealthURL, o.StartTimeout, p.Log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ErrPortTaken marks a start that failed because a port chosen by FreePort was taken by another
// process before the collector bound it: free ports are only free at the moment they are picked.
var ErrPortTaken = errors.New("a listen port was taken before the collector bound it")

// StartOnFreePorts starts a collector whose ports prepare chooses (e.g. with FreePort), choosing
// again, up to attempts times, when one of them was taken in between. Tests and benchmarks run
// in parallel with other processes that pick free ports too.
func StartOnFreePorts(ctx context.Context, attempts int, prepare func() (Options, error)) (*Process, error) {
	for attempt := 1; ; attempt++ {
		o, err := prepare()
		if err != nil {
			return nil, err
		}
		p, err := Start(ctx, o)
		if err == nil || attempt >= attempts || !errors.Is(err, ErrPortTaken) {
			return p, err
		}
	}
}

// Log returns everything the process wrote so far.
func (p *Process) Log() string { return p.log.String() }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM and waits up to timeout for a clean exit, then kills the process.
func (p *Process) Stop(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.exitErr()
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		return p.exitErr()
	case <-time.After(timeout):
		_ = p.Kill()
		return fmt.Errorf("collector did not stop within %s after SIGTERM", timeout)
	}
}

// Kill sends SIGKILL and waits for the process to exit.
func (p *Process) Kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	<-p.done
	return nil
}

// Exited reports whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *Process) exitErr() error {
	if p.err != nil {
		return fmt.Errorf("collector exited: %w", p.err)
	}
	return nil
}

// FreePort returns a TCP port that was free a moment ago on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeUDPPort returns a UDP port that was free a moment ago on 127.0.0.1.
func FreeUDPPort() (int, error) {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port, nil
}

// syncBuffer is a bytes.Buffer safe for the process's writers and readers at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
