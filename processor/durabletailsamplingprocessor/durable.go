package durabletailsamplingprocessor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/tracegate/tracegate/processor/durabletailsamplingprocessor/internal/tracelog"
)

// The log's record kinds. A spans record is a request's fragments, each a 4-byte little-endian
// length and the fragment in OTLP protobuf; a done record is 16-byte trace ids whose decision is
// carried out (dropped, or kept and accepted by the next consumer).
const (
	recordSpans byte = 1
	recordDone  byte = 2
)

var fsyncModes = map[string]tracelog.FsyncMode{
	"always": tracelog.FsyncAlways, "interval": tracelog.FsyncInterval, "never": tracelog.FsyncNever,
}

// openLog replays the log: the traces pending when the process stopped wait again, a full
// decision_wait from now, for spans their clients may still send.
func (p *tailProcessor) openLog() error {
	s := p.cfg.Storage
	now := p.now()
	log, report, err := tracelog.Open(tracelog.Options{
		Dir: s.Directory, SegmentBytes: s.SegmentMiB << 20,
		Fsync: fsyncModes[s.Fsync], FsyncInterval: s.FsyncInterval,
	}, func(seg tracelog.SegmentID, kind byte, payload []byte) error {
		p.replay(seg, kind, payload, now)
		return nil
	})
	if err != nil {
		return fmt.Errorf("opening the pending spans' log in %s: %w", s.Directory, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = log
	for _, t := range p.pending.traces {
		for _, seg := range t.segs {
			log.Ref(seg)
		}
	}
	log.ReleaseUnreferenced()
	p.publishLocked()
	if report.Records > 0 || report.CorruptSegments > 0 {
		p.logger.Info("Pending traces recovered from the disk log",
			zap.Int("traces", len(p.pending.traces)), zap.Int64("spans", p.pending.spans),
			zap.Int("records", report.Records), zap.Int("damaged_segments", report.CorruptSegments),
			zap.Int64("skipped_bytes", report.SkippedBytes))
	}
	return nil
}

// replay applies one record of the log to the pending store (mu is not needed: nothing runs yet).
func (p *tailProcessor) replay(seg tracelog.SegmentID, kind byte, payload []byte, now time.Time) {
	switch kind {
	case recordSpans:
		frags, err := decodeFragments(payload)
		if err != nil {
			p.logger.Warn("A record of the pending spans' log cannot be read; it is skipped", zap.Error(err))
		}
		for _, f := range frags {
			p.pending.add(f, seg, true, now)
			p.heldBytes += f.bytes
		}
	case recordDone:
		for len(payload) >= 16 {
			if t := p.pending.traces[pcommon.TraceID(payload[:16])]; t != nil {
				p.pending.remove(t)
				p.heldBytes -= t.bytes
			}
			payload = payload[16:]
		}
	}
}

// finish releases the log segments of traces whose decision is carried out, and records them as
// done, so that a restart does not pass them on again (were it to, their document ids would make
// Elasticsearch refuse the copies).
func (p *tailProcessor) finish(traces []*pendingTrace) {
	if p.log == nil || len(traces) == 0 {
		return
	}
	ids := make([]byte, 0, 16*len(traces))
	for _, t := range traces {
		ids = append(ids, t.id[:]...)
	}
	p.logMu.Lock()
	_, err := p.log.Append(recordDone, ids)
	p.logMu.Unlock()
	if err != nil {
		p.logger.Warn("Cannot record decided traces in the disk log; a restart decides them again", zap.Error(err))
	}
	for _, t := range traces {
		for _, seg := range t.segs {
			p.log.Unref(seg)
		}
	}
}

var marshaler ptrace.ProtoMarshaler

// encodeFragments is a spans record's payload; it sets each fragment's bytes.
func encodeFragments(frags []*fragment) ([]byte, error) {
	var out []byte
	for _, f := range frags {
		b, err := marshaler.MarshalTraces(f.spans)
		if err != nil {
			return nil, err
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
		f.bytes = int64(len(b))
	}
	return out, nil
}

var unmarshaler ptrace.ProtoUnmarshaler

// decodeFragments reads a spans record back, one fragment per trace whatever the record holds.
func decodeFragments(payload []byte) ([]*fragment, error) {
	var out []*fragment
	for len(payload) > 0 {
		if len(payload) < 4 {
			return out, errors.New("truncated fragment length")
		}
		n := int(binary.LittleEndian.Uint32(payload))
		payload = payload[4:]
		if n > len(payload) {
			return out, fmt.Errorf("fragment of %d bytes in %d", n, len(payload))
		}
		td, err := unmarshaler.UnmarshalTraces(payload[:n])
		if err != nil {
			return out, err
		}
		total := max(int64(td.SpanCount()), 1)
		for _, f := range splitByTrace(td) {
			f.bytes = int64(n) * f.count / total
			out = append(out, f)
		}
		payload = payload[n:]
	}
	return out, nil
}
