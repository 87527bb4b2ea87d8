package bufferprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/tracegate/tracegate/internal/readiness"
	"github.com/tracegate/tracegate/internal/readiness/readinesstest"
	"github.com/tracegate/tracegate/processor/bufferprocessor/internal/metadata"
)

// TestStartReportsHowItKeeps: Start reports memory without storage, else the storage mode and
// directory (the default mode where the configuration names none).
func TestStartReportsHowItKeeps(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name       string
		storage    func(*StorageConfig) // nil: no storage
		mode, want string
	}{
		{"memory", nil, readiness.ModeMemory, ""},
		{"overflow, the default", func(*StorageConfig) {}, ModeOverflow, dir},
		{"write ahead", func(s *StorageConfig) { s.Mode = ModeWriteAhead }, ModeWriteAhead, dir},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			if tt.storage != nil {
				s := defaultStorage()
				s.Directory = dir
				tt.storage(&s)
				cfg.Storage = configoptional.Some(s)
			}
			require.NoError(t, cfg.Validate())
			set := processortest.NewNopSettings(metadata.Type)
			p, err := NewFactory().CreateTraces(context.Background(), set, cfg, consumertest.NewNop())
			require.NoError(t, err)
			board := &readinesstest.Board{}
			require.NoError(t, p.Start(context.Background(), board.Host()))
			require.NoError(t, p.Shutdown(context.Background()))
			assert.Equal(t, []readiness.Buffer{{ID: set.ID, Mode: tt.mode, Directory: tt.want}}, board.Buffers())
		})
	}
}
