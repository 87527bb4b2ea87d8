package esstandin

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// itemResult is the outcome of one bulk item, as the response reports it.
type itemResult struct {
	action  string
	index   string
	id      string // "" for a failed item that named none
	version int64  // success only
	seqNo   int64  // success only
	err     *itemError
}

// status is the item's HTTP status.
func (r *itemResult) status() int {
	switch {
	case r.err != nil:
		return r.err.status
	case r.updated():
		return 200
	default:
		return 201
	}
}

// updated reports whether a successful item overwrote a document (index with an existing _id).
func (r *itemResult) updated() bool { return r.version > 1 }

// appendBulkResponse writes a bulk response, filtered by sel (filter_path), with the members in
// Elasticsearch's order. It is written directly rather than through maps and encoding/json: in
// make bench the stand-in shares a core with the load generator, and a generic response of 2,048
// items cost more than parsing the request did.
func appendBulkResponse(b []byte, took int64, anyError bool, items []itemResult, sel *selector) []byte {
	root := object{b: append(b, '{'), sel: sel}
	root.int("took", took)
	root.bool("errors", anyError)
	if c := root.sel.child("items"); c != nil {
		mark, n := len(root.b), root.n
		root.key("items")
		root.b = append(root.b, '[')
		kept := 0
		for i := range items {
			elemMark := len(root.b)
			if kept > 0 {
				root.b = append(root.b, ',')
			}
			elem := object{b: append(root.b, '{'), sel: c} // arrays are transparent to filter_path
			elem.item(&items[i])
			if elem.n == 0 && !c.whole {
				root.b = root.b[:elemMark]
				continue
			}
			elem.b = append(elem.b, '}')
			root.b = elem.b
			kept++
		}
		if kept == 0 && !c.whole {
			root.b, root.n = root.b[:mark], n
		} else {
			root.b = append(root.b, ']')
		}
	}
	return append(root.b, '}')
}

// object writes the members of one JSON object that its selector keeps.
type object struct {
	b   []byte
	sel *selector
	n   int // members written
}

func (o *object) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.b = appendJSONString(o.b, k)
	o.b = append(o.b, ':')
	o.n++
}

// scalar reports whether the scalar member k is kept, and writes its key if so.
func (o *object) scalar(k string) bool {
	if c := o.sel.child(k); c != nil && c.whole {
		o.key(k)
		return true
	}
	return false
}

func (o *object) str(k, v string) {
	if o.scalar(k) {
		o.b = appendJSONString(o.b, v)
	}
}

func (o *object) int(k string, v int64) {
	if o.scalar(k) {
		o.b = strconv.AppendInt(o.b, v, 10)
	}
}

func (o *object) bool(k string, v bool) {
	if o.scalar(k) {
		o.b = strconv.AppendBool(o.b, v)
	}
}

// nested writes the member k, an object filled by fill, unless the selector keeps none of it.
func (o *object) nested(k string, fill func(*object)) {
	c := o.sel.child(k)
	if c == nil {
		return
	}
	mark, n := len(o.b), o.n
	o.key(k)
	inner := object{b: append(o.b, '{'), sel: c}
	fill(&inner)
	if inner.n == 0 && !c.whole {
		o.b, o.n = o.b[:mark], n
		return
	}
	inner.b = append(inner.b, '}')
	o.b = inner.b
}

// item writes {"<action>":{…}} of one item.
func (o *object) item(r *itemResult) {
	o.nested(r.action, func(res *object) {
		res.str("_index", r.index)
		if r.err != nil {
			if r.id != "" {
				res.str("_id", r.id)
			}
			res.int("status", int64(r.status()))
			res.nested("error", func(e *object) {
				e.str("type", r.err.kind)
				e.str("reason", r.err.reason)
			})
			return
		}
		res.str("_id", r.id)
		res.int("_version", r.version)
		result := "created"
		if r.updated() {
			result = "updated"
		}
		res.str("result", result)
		res.nested("_shards", func(sh *object) {
			sh.int("total", 1)
			sh.int("successful", 1)
			sh.int("failed", 0)
		})
		res.int("status", int64(r.status()))
		res.int("_seq_no", r.seqNo)
		res.int("_primary_term", 1)
	})
}

// appendJSONString appends s as a JSON string: printable ASCII as is, anything else as
// encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
