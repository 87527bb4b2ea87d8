package collectorproc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestStartOnFreePorts checks that only a start that failed on a taken port is tried again.
func TestStartOnFreePorts(t *testing.T) {
	failing := func(message string) Options {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		return Options{
			Binary:    "/bin/sh",
			Args:      []string{"-c", "echo '" + message + "'; exit 1"},
			HealthURL: fmt.Sprintf("http://127.0.0.1:%d/", port),
		}
	}
	running := Options{Binary: "/bin/sh", Args: []string{"-c", "exec sleep 30"}}
	tests := []struct {
		name         string
		first        string // what the first process prints before it exits
		wantPrepares int
		wantPortErr  bool
		wantStarted  bool
	}{
		{"taken port is chosen again", "listen tcp 127.0.0.1:8126: bind: address already in use", 2, false, true},
		{"other failure is returned", "invalid configuration", 1, false, false},
		{"taken on every attempt", "", 3, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prepares := 0
			p, err := StartOnFreePorts(context.Background(), 3, func() (Options, error) {
				prepares++
				switch {
				case tt.first == "":
					return failing("bind: address already in use"), nil
				case prepares == 1:
					return failing(tt.first), nil
				}
				return running, nil
			})
			if p != nil {
				defer func() { _ = p.Kill() }()
			}
			if prepares != tt.wantPrepares {
				t.Errorf("prepared %d times, want %d", prepares, tt.wantPrepares)
			}
			if got := errors.Is(err, ErrPortTaken); got != tt.wantPortErr {
				t.Errorf("errors.Is(%v, ErrPortTaken) = %v, want %v", err, got, tt.wantPortErr)
			}
			if (p != nil) != tt.wantStarted || (err == nil) != tt.wantStarted {
				t.Errorf("process %v, error %v; want started=%v", p != nil, err, tt.wantStarted)
			}
		})
	}
}

// TestStartRefusesAHealthCheckThatAlreadyAnswers: a health port owned by another collector is a
// taken port too, and nothing is started.
func TestStartRefusesAHealthCheckThatAlreadyAnswers(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer other.Close()
	p, err := Start(context.Background(), Options{Binary: "/bin/sh", Args: []string{"-c", "exec sleep 30"}, HealthURL: other.URL + "/"})
	if p != nil || !errors.Is(err, ErrPortTaken) {
		t.Fatalf("Start = %v, %v; want nil and ErrPortTaken", p, err)
	}
}
