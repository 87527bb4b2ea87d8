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
	undecodable := int64(0)
	log, report, err := tracelog.Open(tracelog.Options{
		Dir: s.Directory, SegmentBytes: s.SegmentMiB << 20,
		Fsync: fsyncModes[s.Fsync], FsyncInterval: s.FsyncInterval,
	}, func(seg tracelog.SegmentID, at int64, kind byte, payload []byte) error {
		if !p.replay(seg, at, kind, payload, now) {
			undecodable += int64(len(payload))
		}
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
	fields := []zap.Field{
		zap.Int("traces", len(p.pending.traces)), zap.Int64("spans", p.pending.spans),
		zap.Int("records", report.Records), zap.Int("damaged_segments", report.CorruptSegments),
		zap.Int64("damaged_bytes", report.SkippedBytes+undecodable),
	}
	if damaged := report.SkippedBytes + undecodable; damaged > 0 {
		// Spans in these bytes were acknowledged and are lost: said at warn, the configs' level.
		p.tel.damaged(damaged)
		p.logger.Warn("Part of the pending spans' disk log could not be read back; the spans in it are lost", fields...)
	} else if report.Records > 0 {
		p.logger.Info("Pending traces recovered from the disk log", fields...)
	}
	return nil
}

// replay applies one record of the log to the pending store (mu is not needed: nothing runs yet);
// false: the record could not be read whole.
// at is where the payload starts in segment seg: a fragment that keeps its bytes of the payload
// is held as its place on disk, the rest (a record of several traces in one fragment, which
// tracegate does not write) in memory.
func (p *tailProcessor) replay(seg tracelog.SegmentID, at int64, kind byte, payload []byte, now time.Time) bool {
	switch kind {
	case recordSpans:
		frags, err := decodeFragments(payload)
		if err != nil {
			p.logger.Warn("A record of the pending spans' log cannot be read; the fragments after the damage are lost", zap.Error(err))
		}
		if _, prepErr := p.prepare(frags); prepErr != nil {
			p.logger.Warn("A record of the pending spans' log cannot be read; it is lost", zap.Error(prepErr))
			return false
		}
		for _, f := range frags {
			if f.at >= 0 {
				f.onDisk, f.seg, f.at = true, seg, at+f.at
			} else {
				p.heldBytes += int64(len(f.encoded))
			}
			p.pending.add(f, now)
		}
		return err == nil
	case recordDone:
		for len(payload) >= 16 {
			if t := p.pending.traces[pcommon.TraceID(payload[:16])]; t != nil {
				p.pending.remove(t)
				p.heldBytes -= t.bytes
			}
			payload = payload[16:]
		}
	}
	return true
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

// recordParts is a spans record's payload in parts: each fragment's length and encoding.
func recordParts(frags []*fragment) [][]byte {
	lengths := make([]byte, 4*len(frags))
	parts := make([][]byte, 0, 2*len(frags))
	for i, f := range frags {
		binary.LittleEndian.PutUint32(lengths[4*i:], uint32(len(f.encoded)))
		parts = append(parts, lengths[4*i:4*i+4], f.encoded)
	}
	return parts
}

var unmarshaler ptrace.ProtoUnmarshaler

// decodeFragments reads a spans record back, one fragment per trace whatever the record holds;
// a fragment of one trace keeps its bytes of the payload as its encoding, and their offset in
// the payload as at (-1 for the others).
func decodeFragments(payload []byte) ([]*fragment, error) {
	var out []*fragment
	pos := int64(0)
	for len(payload) > 0 {
		if len(payload) < 4 {
			return out, errors.New("truncated fragment length")
		}
		n := int(binary.LittleEndian.Uint32(payload))
		payload = payload[4:]
		pos += 4
		if n > len(payload) {
			return out, fmt.Errorf("fragment of %d bytes in %d", n, len(payload))
		}
		td, err := unmarshaler.UnmarshalTraces(payload[:n])
		if err != nil {
			return out, err
		}
		frags := splitByTrace(td)
		for _, f := range frags {
			f.at = -1
		}
		if len(frags) == 1 {
			frags[0].encoded, frags[0].at = payload[:n:n], pos
		}
		out = append(out, frags...)
		payload = payload[n:]
		pos += int64(n)
	}
	return out, nil
}
