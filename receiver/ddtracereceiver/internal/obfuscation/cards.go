package obfuscation

import (
	"strconv"

	"github.com/tracegate/tracegate/receiver/ddtracereceiver/internal/payload"
)

// cards replaces the values of the span's tags and of its events' attributes that look like card
// numbers with "?", and reports whether one did. The library skips the keys known to hold none
// (error.msg, env, http.status_code, _-prefixed keys, ...) and those of keep_values.
func (o *Obfuscator) cards(s *payload.Span) bool {
	changed := false
	for i := range s.Meta {
		kv := &s.Meta[i]
		if !maybeCard(kv.Value) {
			continue
		}
		if out := o.lib.ObfuscateCreditCardNumber(kv.Key, kv.Value); out != kv.Value {
			kv.Value, changed = out, true
		}
	}
	for i := range s.Events {
		attrs := s.Events[i].Attributes
		for j := range attrs {
			changed = o.cardAttribute(&attrs[j], attrs[j].Key) || changed
		}
	}
	return changed
}

// cardAttribute checks one event attribute. Numbers are checked as the decimal text a tracer
// would have written, and a card number found becomes the string "?", as the agent does.
func (o *Obfuscator) cardAttribute(a *payload.EventAttribute, key string) bool {
	var text string
	switch a.Type {
	case payload.AttributeString:
		text = a.Str
	case payload.AttributeInt:
		text = strconv.FormatInt(a.Int, 10)
	case payload.AttributeDouble:
		text = strconv.FormatFloat(a.Double, 'f', -1, 64)
	case payload.AttributeArray:
		changed := false
		for i := range a.Array {
			changed = o.cardAttribute(&a.Array[i], key) || changed
		}
		return changed
	default:
		return false // booleans
	}
	if !maybeCard(text) {
		return false
	}
	if out := o.lib.ObfuscateCreditCardNumber(key, text); out != text {
		*a = payload.EventAttribute{Key: a.Key, Type: payload.AttributeString, Str: out}
		return true
	}
	return false
}

// maybeCard is the library's own first test (at least 12 characters, the first a digit, a space
// or a dash), done before the call: most values fail it, and the library looks the key up in its
// lists before it.
func maybeCard(v string) bool {
	return len(v) >= 12 && (v[0] == ' ' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))
}
