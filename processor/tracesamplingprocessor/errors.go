package tracesamplingprocessor

import (
	"time"

	"github.com/tracegate/tracegate/internal/ddsampler"
)

// maxErrorSignatures bounds the chunk shapes the error sampler tells apart (the agent shrinks
// its table at 200 signatures); beyond it chunks share the default rate.
const maxErrorSignatures = 10_000

// errorSampler is the agent's error sampler: chunks with an error, counted per signature, kept at
// the rate that holds them to errors_per_second in all.
type errorSampler struct{ budget *ddsampler.Budget[uint64] }

func newErrorSampler(perSecond float64) *errorSampler {
	return &errorSampler{budget: ddsampler.NewBudget[uint64](perSecond, maxErrorSignatures)}
}

func (e *errorSampler) sample(now time.Time, signature, traceID uint64) bool {
	e.budget.Count(now, signature, 1)
	return ddsampler.KeepByRate(traceID, e.budget.Rate(signature))
}
