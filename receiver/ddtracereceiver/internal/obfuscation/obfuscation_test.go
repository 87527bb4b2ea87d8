package obfuscation

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// The statement cache runs goroutines from Start to Shutdown; none may outlive the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func kvs(pairs ...string) []payload.KV {
	var out []payload.KV
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, payload.KV{Key: pairs[i], Value: pairs[i+1]})
	}
	return out
}

func one(spans ...payload.Span) []payload.Payload {
	return []payload.Payload{{Chunks: []payload.Chunk{{Spans: spans}}}}
}

// TestEveryPlaceOfAKey: a key sent twice is obfuscated in both places, and keys match whatever
// their case, as the translator maps them.
func TestEveryPlaceOfAKey(t *testing.T) {
	o := New(DefaultConfig())
	s := payload.Span{Type: "sql", Resource: "SELECT 1", Meta: kvs(
		"sql.query", "SELECT * FROM t WHERE a = 'x'",
		"SQL.Query", "SELECT * FROM t WHERE b = 'y'",
		"DB.STATEMENT", "SELECT 1",
		"other", "SELECT 'kept'",
	)}
	ps := one(s)
	c := o.Payloads(ps)
	got := ps[0].Chunks[0].Spans[0]
	assert.Equal(t, "SELECT ?", got.Resource)
	assert.Equal(t, kvs(
		"sql.query", "SELECT * FROM t WHERE a = ?",
		"SQL.Query", "SELECT * FROM t WHERE b = ?",
		"DB.STATEMENT", "SELECT ?",
		"other", "SELECT 'kept'",
	), got.Meta)
	assert.Equal(t, int64(1), c.Spans[RuleSQL])
}

// TestMemcachedRemovesInPlace: removing memcached.command from a decoded span leaves the span's
// other tags and its neighbour's meta (cut from the same block) as they were.
func TestMemcachedRemovesInPlace(t *testing.T) {
	body := []byte(`[[` +
		`{"trace_id":1,"span_id":1,"type":"memcached","resource":"set","meta":{"a":"1","memcached.command":"set k 0 0 1\r\nv","z":"2"}},` +
		`{"trace_id":1,"span_id":2,"type":"custom","resource":"x","meta":{"b":"3","c":"4"}}]]`)
	p, err := payload.DecodeTracesJSON(body)
	require.NoError(t, err)
	defer p.Release()
	ps := []payload.Payload{p}
	c := New(DefaultConfig()).Payloads(ps)
	spans := ps[0].Chunks[0].Spans
	assert.ElementsMatch(t, kvs("a", "1", "z", "2"), spans[0].Meta)
	assert.ElementsMatch(t, kvs("b", "3", "c", "4"), spans[1].Meta)
	assert.Equal(t, int64(1), c.Spans[RuleMemcached])
}

// TestEventCards: card numbers in span events are hidden too, numbers included (the event of
// datadog-agent pkg/trace/agent/obfuscate_test.go, TestObfuscateSpanEvent).
func TestEventCards(t *testing.T) {
	card := payload.EventAttribute{Type: payload.AttributeString, Str: "5105-1051-0510-5100"}
	s := payload.Span{Type: "custom", Events: []payload.Event{{Name: "evt", Attributes: []payload.EventAttribute{
		{Key: "str", Type: payload.AttributeString, Str: "5105-1051-0510-5100"},
		{Key: "int", Type: payload.AttributeInt, Int: 5105105105105100},
		{Key: "dbl", Type: payload.AttributeDouble, Double: 5105105105105100},
		{Key: "arr", Type: payload.AttributeArray, Array: []payload.EventAttribute{card, {Type: payload.AttributeInt, Int: 5105105105105100}}},
		{Key: "small", Type: payload.AttributeInt, Int: 42},
		{Key: "flag", Type: payload.AttributeBool, Bool: true},
	}}}}
	ps := one(s)
	c := New(DefaultConfig()).Payloads(ps)
	hidden := payload.EventAttribute{Type: payload.AttributeString, Str: "?"}
	named := func(k string) payload.EventAttribute { h := hidden; h.Key = k; return h }
	assert.Equal(t, []payload.EventAttribute{
		named("str"), named("int"), named("dbl"),
		{Key: "arr", Type: payload.AttributeArray, Array: []payload.EventAttribute{hidden, hidden}},
		{Key: "small", Type: payload.AttributeInt, Int: 42},
		{Key: "flag", Type: payload.AttributeBool, Bool: true},
	}, ps[0].Chunks[0].Spans[0].Events[0].Attributes)
	assert.Equal(t, int64(1), c.Spans[RuleCreditCards])
}

// TestSwitches: each rule's switch and the section's enabled leave the values as sent.
func TestSwitches(t *testing.T) {
	span := func() payload.Span {
		return payload.Span{Type: "sql", Resource: "SELECT 42", Meta: kvs("card", "4111 1111 1111 1111")}
	}
	for _, tt := range []struct {
		name         string
		modify       func(*Config)
		resource     string
		card         string
		wantSQLCount int64
	}{
		{"defaults", func(*Config) {}, "SELECT ?", "?", 1},
		{"sql off", func(c *Config) { c.SQL.Enabled = false }, "SELECT 42", "?", 0},
		{"cards off", func(c *Config) { c.CreditCards.Enabled = false }, "SELECT ?", "4111 1111 1111 1111", 1},
		{"all off", func(c *Config) { c.Enabled = false }, "SELECT 42", "4111 1111 1111 1111", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			tt.modify(&cfg)
			ps := one(span())
			c := New(cfg).Payloads(ps)
			got := ps[0].Chunks[0].Spans[0]
			assert.Equal(t, tt.resource, got.Resource)
			assert.Equal(t, tt.card, got.Meta[0].Value)
			assert.Equal(t, tt.wantSQLCount, c.Spans[RuleSQL])
		})
	}
}

// TestConcurrentRequests runs requests at once on one started obfuscator (the receiver shares
// one) and compares each result with a serial run's; with -race it also checks that the library
// keeps no unguarded state in the mode used.
func TestConcurrentRequests(t *testing.T) {
	spans := func(i int) []payload.Span {
		return []payload.Span{
			{Type: "sql", Resource: fmt.Sprintf("SELECT * FROM t%d WHERE a = '%d' AND b = 'it''s'", i%7, i)},
			{Type: "sql", Resource: `SELECT * FROM t WHERE s = 'a\'b'`}, // flips the library's escape mode
			{Type: "cassandra", Resource: fmt.Sprintf("select k from c where id in (%d, %d)", i, i+1)},
			{Type: "sql", Resource: "SELECT a FROM b WHERE a.x !* 2"},
			{Type: "redis", Resource: "SET k v", Meta: kvs("redis.raw_command", fmt.Sprintf("SET k%d v%d", i, i))},
			{Type: "mongodb", Meta: kvs("mongodb.query", fmt.Sprintf(`{"a":%d,"b":"x"}`, i))},
			{Type: "elasticsearch", Meta: kvs("elasticsearch.body", fmt.Sprintf(`{"q":{"m":"v%d"}}`, i))},
			{Type: "custom", Meta: kvs("card", "4111 1111 1111 1111")},
		}
	}
	serial := New(DefaultConfig())
	want := make([][]payload.Span, 200)
	for i := range want {
		ps := one(spans(i)...)
		serial.Payloads(ps)
		want[i] = ps[0].Chunks[0].Spans
	}

	shared := New(DefaultConfig())
	shared.Start()
	defer shared.Shutdown()
	var wg sync.WaitGroup
	got := make([][]payload.Span, len(want))
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < len(got); i += 4 {
				ps := one(spans(i)...)
				shared.Payloads(ps)
				got[i] = ps[0].Chunks[0].Spans
			}
		})
	}
	wg.Wait()
	for i := range want {
		require.Equal(t, want[i], got[i], "request %d", i)
		assert.NotContains(t, got[i][0].Resource, fmt.Sprintf("'%d'", i))
	}
}

// TestStartShutdown: the cache exists between Start and Shutdown only (goleak checks its
// goroutines), and the obfuscator works before, during and after.
func TestStartShutdown(t *testing.T) {
	o := New(DefaultConfig())
	check := func() {
		ps := one(payload.Span{Type: "sql", Resource: "SELECT 'secret'"})
		o.Payloads(ps)
		assert.Equal(t, "SELECT ?", ps[0].Chunks[0].Spans[0].Resource)
	}
	check()
	o.Start()
	assert.True(t, o.cached)
	check()
	check() // from the cache
	o.Shutdown()
	assert.False(t, o.cached)
	check()

	noCache := DefaultConfig()
	noCache.Cache.Enabled = false
	o = New(noCache)
	o.Start()
	assert.False(t, o.cached, "no cache was asked for")
	o.Shutdown()
}
