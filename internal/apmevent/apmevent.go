// Package apmevent carries APM Server's events (apm-data's modelpb.APMEvent) between tracegate's
// components as log records: the Elastic APM intake receiver hands the events it decoded to the
// apmdocs connector this way, so that the agents' events become APM Server's documents without
// a round trip through OpenTelemetry's model. A record's body is the event in protobuf; the
// records sit in a scope of their own, so that a pipeline can tell them from ordinary logs.
package apmevent

import (
	"errors"

	"github.com/elastic/apm-data/model/modelpb"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// ScopeName names the scope whose records are APM events.
const ScopeName = "tracegate/apm-event"

// Append adds events to logs, one record each, in one resource and scope.
func Append(logs plog.Logs, events []*modelpb.APMEvent) error {
	if len(events) == 0 {
		return nil
	}
	sl := logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(ScopeName)
	records := sl.LogRecords()
	records.EnsureCapacity(len(events))
	for _, e := range events {
		b, err := e.MarshalVT()
		if err != nil {
			return err
		}
		records.AppendEmpty().Body().SetEmptyBytes().FromRaw(b)
	}
	return nil
}

// IsEvents reports whether a scope's records are APM events.
func IsEvents(sl plog.ScopeLogs) bool { return sl.Scope().Name() == ScopeName }

// ErrNotEvent is returned for a record whose body is not an encoded event.
var ErrNotEvent = errors.New("apm event record: body is not an encoded APM event")

// Decode returns the event a record of an events scope carries.
func Decode(r plog.LogRecord) (*modelpb.APMEvent, error) {
	body := r.Body()
	if body.Type() != pcommon.ValueTypeBytes {
		return nil, ErrNotEvent
	}
	e := &modelpb.APMEvent{}
	if err := e.UnmarshalVT(body.Bytes().AsRaw()); err != nil {
		return nil, errors.Join(ErrNotEvent, err)
	}
	return e, nil
}
