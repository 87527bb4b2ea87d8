package payload

import "github.com/tinylib/msgp/msgp"

// enc builds msgpack test inputs by hand, so tests control every wire type.
type enc struct{ b []byte }

func (e *enc) arr(n int) *enc              { e.b = msgp.AppendArrayHeader(e.b, uint32(n)); return e }
func (e *enc) mapN(n int) *enc             { e.b = msgp.AppendMapHeader(e.b, uint32(n)); return e }
func (e *enc) str(s string) *enc           { e.b = msgp.AppendString(e.b, s); return e }
func (e *enc) bin(b []byte) *enc           { e.b = msgp.AppendBytes(e.b, b); return e }
func (e *enc) u(v uint64) *enc             { e.b = msgp.AppendUint64(e.b, v); return e }
func (e *enc) i(v int64) *enc              { e.b = msgp.AppendInt64(e.b, v); return e }
func (e *enc) f(v float64) *enc            { e.b = msgp.AppendFloat64(e.b, v); return e }
func (e *enc) nil() *enc                   { e.b = msgp.AppendNil(e.b); return e }
func (e *enc) boolean(v bool) *enc         { e.b = msgp.AppendBool(e.b, v); return e }
func (e *enc) raw(b []byte) *enc           { e.b = append(e.b, b...); return e }
func (e *enc) kv(k, v string) *enc         { return e.str(k).str(v) }
func (e *enc) bytes() []byte               { return e.b }
func newEnc() *enc                         { return &enc{} }
func (e *enc) kf(k string, v float64) *enc { return e.str(k).f(v) }
