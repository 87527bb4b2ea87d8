// Package warnonce logs the first occurrence of each cause of dropped or refused data: a flood of
// bad or refused requests costs counters, not log lines.
package warnonce

import (
	"sync"

	"go.uber.org/zap"
)

// Warner logs the first occurrence of each cause; every occurrence is counted in a metric, which
// the line names so an operator knows where the rest went.
type Warner struct {
	logger *zap.Logger
	seen   sync.Map // cause key → struct{}; the keys are a fixed set (causes, reasons, endpoints)
}

// New returns a Warner that logs to logger.
func New(logger *zap.Logger) *Warner { return &Warner{logger: logger} }

// Warn logs msg at warn level the first time key is seen and reports whether it did.
func (o *Warner) Warn(key, countedIn, msg string, fields ...zap.Field) bool {
	if _, seen := o.seen.LoadOrStore(key, struct{}{}); seen {
		return false
	}
	all := make([]zap.Field, 0, len(fields)+1)
	all = append(append(all, fields...), zap.String("repeats", "not logged again; all are counted in "+countedIn))
	o.logger.Warn(msg, all...)
	return true
}
