// A span line: what it may hold, how apm-data would validate it.

package spanjson

import (
	"strings"
)

// span holds what a line said, before the event is built.
type span struct {
	id, traceID, parentID, transactionID optStr
	name, typ, subtype, action, outcome  optStr
	timestamp                            uint64
	duration, sampleRate                 float64
	hasTimestamp, hasDuration, hasRate   bool
	sync                                 *bool
	db                                   database
	dest                                 destination
	http                                 httpContext
	targetType, targetName               optStr // context.service.target
	tags                                 []Tag
}

type database struct {
	instance, link, statement, typ, user optStr
	rowsAffected                         *uint32
}

type destination struct {
	address                     optStr
	port                        *uint32
	serviceName, resource, kind optStr
}

type httpContext struct {
	method, url                optStr
	statusCode, respStatusCode *uint32
	decoded, encoded, transfer *uint64
}

// read reads the span object.
func (sp *span) read(s *scanner) bool {
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return readStr(s, &sp.id)
		case "trace_id":
			return readStr(s, &sp.traceID)
		case "parent_id":
			return readStr(s, &sp.parentID)
		case "transaction_id":
			return readStr(s, &sp.transactionID)
		case "name":
			return readStr(s, &sp.name)
		case "type":
			return readStr(s, &sp.typ)
		case "subtype":
			return readStr(s, &sp.subtype)
		case "action":
			return readStr(s, &sp.action)
		case "outcome":
			return readStr(s, &sp.outcome)
		case "timestamp":
			// apm-data also takes an RFC 3339 string, and null means "now": both declined.
			sp.timestamp, sp.hasTimestamp = s.uint(maxTimestampMicros)
			return sp.hasTimestamp
		case "duration":
			return readDecimal(s, &sp.duration, &sp.hasDuration)
		case "sample_rate":
			return readDecimal(s, &sp.sampleRate, &sp.hasRate)
		case "sync":
			return readBool(s, &sp.sync)
		case "context":
			return sp.readContext(s)
		}
		return false
	})
}

func (sp *span) readContext(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "db":
			return sp.db.read(s)
		case "destination":
			return sp.dest.read(s)
		case "http":
			return sp.http.read(s)
		case "tags":
			return readTags(s, &sp.tags)
		case "service":
			return sp.readService(s)
		case "message":
			return s.emptyObject() // its contents are apm-data's to read
		}
		return false
	})
}

// readService reads the span's service context, of which only the target (the service called) is
// taken.
func (sp *span) readService(s *scanner) bool {
	return readObject(s, func(key []byte) bool {
		return string(key) == "target" && readObject(s, func(key []byte) bool {
			switch string(key) {
			case "type":
				return readStr(s, &sp.targetType)
			case "name":
				return readStr(s, &sp.targetName)
			}
			return false
		})
	})
}

func (db *database) read(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "instance":
			return readStr(s, &db.instance)
		case "link":
			return readStr(s, &db.link)
		case "statement":
			return readStr(s, &db.statement)
		case "type":
			return readStr(s, &db.typ)
		case "user":
			return readStr(s, &db.user)
		case "rows_affected":
			return readUint32(s, &db.rowsAffected)
		}
		return false
	})
}

func (d *destination) read(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "address":
			return readStr(s, &d.address)
		case "port":
			return readUint32(s, &d.port)
		case "service":
			return d.readService(s)
		}
		return false
	})
}

func (d *destination) readService(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return readStr(s, &d.serviceName)
		case "resource":
			return readStr(s, &d.resource)
		case "type":
			return readStr(s, &d.kind)
		}
		return false
	})
}

func (h *httpContext) read(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "method":
			return readStr(s, &h.method)
		case "url":
			return readStr(s, &h.url)
		case "status_code":
			return readUint32(s, &h.statusCode)
		case "response":
			return h.readResponse(s)
		}
		return false
	})
}

func (h *httpContext) readResponse(s *scanner) bool {
	if s.null() {
		return true
	}
	return s.object(func(key []byte) bool {
		switch string(key) {
		case "status_code":
			return readUint32(s, &h.respStatusCode)
		case "decoded_body_size":
			return readUint64(s, &h.decoded)
		case "encoded_body_size":
			return readUint64(s, &h.encoded)
		case "transfer_size":
			return readUint64(s, &h.transfer)
		}
		return false
	})
}

// valid applies apm-data's validation of the fields read; a span it would refuse is declined,
// so that apm-data answers it with its own message.
func (sp *span) valid() bool {
	if !sp.id.set || !sp.traceID.set || !sp.parentID.set || !sp.name.set || !sp.typ.set ||
		!sp.hasTimestamp || !sp.hasDuration || sp.duration < 0 {
		return false
	}
	if !validOutcome(sp.outcome) || sp.dest.hasService() && !sp.dest.resource.set {
		return false
	}
	return !tooLong(sp.id, sp.traceID, sp.parentID, sp.transactionID, sp.name, sp.typ, sp.subtype, sp.action,
		sp.db.link, sp.dest.address, sp.dest.serviceName, sp.dest.resource, sp.dest.kind, sp.http.method)
}

// splitType is apm-data's reading of a span type given without subtype and action: "db.mysql.query".
func splitType(t string) (typ, subtype, action string) {
	typ, rest, ok := strings.Cut(t, ".")
	if ok {
		subtype, action, _ = strings.Cut(rest, ".")
	}
	return typ, subtype, action
}
