package edotdiff

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tracegate/tracegate/internal/testbed/tracemodel"

	"github.com/stretchr/testify/require"

	"github.com/tracegate/tracegate/internal/testbed/loadgen"
)

// tracegenBody is twenty of tracegen's traces as one intake stream (the pipeline benchmarks' load).
func tracegenBody(t *testing.T) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 20 {
		parts, err := loadgen.Encode(context.Background(), loadgen.ElasticAPMIntake, tracemodel.NewTrace(r, "svc-a", 10, start))
		require.NoError(t, err)
		for _, p := range parts {
			if i > 0 { // one metadata line per stream
				p = p[bytes.IndexByte(p, '\n')+1:]
			}
			buf.Write(p)
		}
	}
	return buf.Bytes()
}
