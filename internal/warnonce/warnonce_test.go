package warnonce

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestWarnerIsConcurrencySafe: of many goroutines hitting one cause at once, one logs.
func TestWarnerIsConcurrencySafe(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	w := New(zap.New(core))
	done := make(chan bool, 16)
	for range cap(done) {
		go func() { done <- w.Warn("k", "m", "msg") }()
	}
	logged := 0
	for range cap(done) {
		if <-done {
			logged++
		}
	}
	assert.Equal(t, 1, logged)
	assert.Equal(t, 1, logs.Len())
	assert.False(t, w.Warn("k", "m", "msg"), "a seen cause is not logged again")
	assert.True(t, w.Warn("other", "m", "msg"), "another cause is")
}
