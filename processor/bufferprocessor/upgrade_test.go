package bufferprocessor

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/diskqueue"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// copyV1Log copies the disk log written by format version 1 (the release before segment headers;
// how, in internal/diskqueue/format_test.go) into a fresh directory. Its four records hold spans
// 0 to 11, three each; the first was delivered, the second was in flight.
func copyV1Log(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join("internal", "diskqueue", "testdata", "v1"))))
	return dir
}

// TestReplaysADiskLogFromBeforeTheUpgrade: the buffer delivers the spans of a log written by the
// previous format to its next consumer, each once, and not those that were delivered before.
func TestReplaysADiskLogFromBeforeTheUpgrade(t *testing.T) {
	dir := copyV1Log(t)
	rec := newRecorder()
	h := start(t, diskCfg(dir, ModeOverflow, FsyncInterval), rec, nil)
	rec.waitDistinct(t, 9)
	h.shutdown(t)
	assert.Zero(t, rec.checkAll(t, rangeIDs(3, 9)), "duplicates")
	assert.Equal(t, 9, rec.distinct(), "spans 0 to 2 were delivered before the upgrade")
	assert.Equal(t, int64(3), h.sum(t, "processor_buffer_replayed_batches", ""))
	assert.Equal(t, int64(1), h.sum(t, "processor_buffer_duplicates_possible_batches", ""))
	assert.Zero(t, h.sum(t, "processor_buffer_corrupt_records", ""))
}

// TestRefusesADiskLogFromALaterRelease: after a downgrade, a segment of a format version this
// release does not know makes Start fail (the collector does not start) instead of misreading it.
func TestRefusesADiskLogFromALaterRelease(t *testing.T) {
	dir := copyV1Log(t)
	h := make([]byte, 12) // a segment header (internal/diskqueue/format.go) claiming version 9
	copy(h[0:4], "TGSG")
	binary.LittleEndian.PutUint16(h[4:6], 9)
	binary.LittleEndian.PutUint16(h[6:8], 12)
	binary.LittleEndian.PutUint32(h[8:12], crc32.Checksum(h[0:8], crc32.MakeTable(crc32.Castagnoli)))
	seg := filepath.Join(dir, "0000000000000004.seg")
	require.NoError(t, os.WriteFile(seg, h, 0o600))

	cfg := diskCfg(dir, ModeOverflow, FsyncInterval)
	p, err := newTracesBuffer(processortest.NewNopSettings(metadata.Type), cfg, newRecorder())
	require.NoError(t, err)
	err = p.Start(context.Background(), componenttest.NewNopHost())
	require.ErrorIs(t, err, diskqueue.ErrUnsupportedVersion)
	require.EqualError(t, err, `storage.directory "`+dir+`": segment `+seg+`: unsupported disk buffer format version 9 `+
		`(the highest this release reads is 2): written by a later release, it cannot be read after a downgrade`)
	require.NoError(t, p.Shutdown(context.Background()))
}
