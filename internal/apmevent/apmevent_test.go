package apmevent

import (
	"testing"

	"github.com/elastic/apm-data/model/modelpb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/protobuf/proto"
)

func TestRoundTrip(t *testing.T) {
	in := []*modelpb.APMEvent{
		{Transaction: &modelpb.Transaction{Id: "t1", Name: "GET /"}, Service: &modelpb.Service{Name: "a"}},
		{Span: &modelpb.Span{Id: "s1", Type: "db"}, ParentId: "t1"},
	}
	logs := plog.NewLogs()
	require.NoError(t, Append(logs, in))
	require.NoError(t, Append(logs, nil)) // nothing added
	require.Equal(t, 1, logs.ResourceLogs().Len())
	sl := logs.ResourceLogs().At(0).ScopeLogs().At(0)
	require.True(t, IsEvents(sl))
	require.Equal(t, 2, sl.LogRecords().Len())
	for i := range in {
		got, err := Decode(sl.LogRecords().At(i))
		require.NoError(t, err)
		assert.True(t, proto.Equal(in[i], got))
	}
}

func TestDecodeRefusesOtherBodies(t *testing.T) {
	r := plog.NewLogRecord()
	r.Body().SetStr("text")
	_, err := Decode(r)
	require.ErrorIs(t, err, ErrNotEvent)
	r.Body().SetEmptyBytes().FromRaw([]byte{0xff, 0xff, 0xff})
	_, err = Decode(r)
	require.ErrorIs(t, err, ErrNotEvent)
	assert.False(t, IsEvents(plog.NewScopeLogs()))
}

// FuzzDecode: any record body is decoded or refused with ErrNotEvent, never a panic.
func FuzzDecode(f *testing.F) {
	good, _ := (&modelpb.APMEvent{Transaction: &modelpb.Transaction{Id: "t1"}}).MarshalVT()
	f.Add(good)
	f.Add([]byte{0x0a, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		r := plog.NewLogRecord()
		r.Body().SetEmptyBytes().FromRaw(body)
		if _, err := Decode(r); err != nil {
			require.ErrorIs(t, err, ErrNotEvent)
		}
	})
}
