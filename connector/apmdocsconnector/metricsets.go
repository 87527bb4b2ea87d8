package apmdocsconnector

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/elastic/apm-data/model/modelpb"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/connector/apmdocsconnector/internal/aggregate"
)

// maxHeldMetricsets bounds the metricset batches held while the next consumer refuses them (a
// full buffer): at 1m, 10m and 60m, 180 is an hour of refusals.
const maxHeldMetricsets = 180

var (
	errNoSide      = errors.New("apmdocs: no side to write metricsets to")
	errTooManyHeld = errors.New("apmdocs: too many metricset batches held for a refusing consumer")
)

// metricsetWriter writes the windows the aggregation harvested, and keeps those the next consumer
// refused for a later tick: a metricset is made once, so it cannot be asked for again.
type metricsetWriter struct {
	a    *apmDocs
	mu   sync.Mutex
	held []heldMetricsets
}

type heldMetricsets struct {
	logs  plog.Logs
	count int64
}

func (w *metricsetWriter) write(ctx context.Context, harvested []aggregate.Metricsets, final bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range harvested {
		batch := modelpb.Batch(m.Events)
		salt := m.Interval + "/" + strconv.FormatInt(m.Start.UnixNano(), 10) + "/" + strconv.Itoa(m.Generation)
		logs := w.a.documents(ctx, batch, salt)
		if logs.LogRecordCount() > 0 {
			w.held = append(w.held, heldMetricsets{logs: logs, count: int64(logs.LogRecordCount())})
		}
	}
	next := w.a.sink.get()
	kept := w.held[:0]
	for _, h := range w.held {
		err := errNoSide
		if next != nil {
			err = next.ConsumeLogs(ctx, h.logs)
		}
		switch {
		case err == nil:
		case consumererror.IsPermanent(err) || final:
			w.a.dropped(ctx, h.count, reasonRefused, err)
		default:
			kept = append(kept, h)
		}
	}
	if over := len(kept) - maxHeldMetricsets; over > 0 {
		for _, h := range kept[:over] {
			w.a.dropped(ctx, h.count, reasonRefused, errTooManyHeld)
		}
		kept = kept[over:]
	}
	if len(kept) > 0 {
		w.a.logger.Debug("metricsets held for the next consumer", zap.Int("batches", len(kept)))
	}
	w.held = kept
}
