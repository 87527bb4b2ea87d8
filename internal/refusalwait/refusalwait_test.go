package refusalwait

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumererror"
)

func TestOffer(t *testing.T) {
	refused := errors.New("refused")
	permanent := consumererror.NewPermanent(errors.New("bad"))
	for _, tc := range []struct {
		name      string
		wait      time.Duration
		errs      []error // what each attempt returns; past the end, refused
		wantErr   error
		wantTries int
	}{
		{"accepted at once", time.Second, []error{nil}, nil, 1},
		{"accepted after refusals", time.Second, []error{refused, refused, nil}, nil, 3},
		{"permanent is not re-offered", time.Second, []error{permanent}, permanent, 1},
		{"no wait answers the first refusal", 0, []error{refused, nil}, refused, 1},
		{"refused until the wait has passed", 30 * time.Millisecond, nil, refused, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			start := time.Now()
			err := Offer(context.Background(), tc.wait, func(attempt int) error {
				assert.Equal(t, tries, attempt)
				tries++
				if attempt < len(tc.errs) {
					return tc.errs[attempt]
				}
				return refused
			})
			if tc.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.wantErr)
			}
			if tc.wantTries >= 0 {
				assert.Equal(t, tc.wantTries, tries)
			} else {
				assert.Greater(t, tries, 2)
				assert.GreaterOrEqual(t, time.Since(start), tc.wait)
			}
		})
	}
}

// TestOfferStopsWhenTheClientGoes: a cancelled request ends the wait with the refusal.
func TestOfferStopsWhenTheClientGoes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	refused := errors.New("refused")
	tries := 0
	err := Offer(ctx, time.Minute, func(int) error {
		tries++
		cancel()
		return refused
	})
	require.ErrorIs(t, err, refused)
	assert.Equal(t, 1, tries)
}
