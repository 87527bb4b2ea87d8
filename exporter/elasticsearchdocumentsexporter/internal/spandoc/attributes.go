package spandoc

import (
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Attribute names that steer the exporter (where a document goes, its _id, its mapping) and are
// not part of the document.
const (
	AttrIndex      = "elasticsearch.index"
	AttrDocumentID = "elasticsearch.document_id"
	AttrMapping    = "elastic.mapping.mode"
	attrDataset    = "data_stream.dataset"
	attrNamespace  = "data_stream.namespace"
	attrType       = "data_stream.type"
	attrHints      = "elasticsearch.mapping.hints"
	attrPipeline   = "elasticsearch.ingest_pipeline"
)

func isControl(key string) bool {
	switch key {
	case attrType, attrDataset, attrNamespace, attrHints, AttrMapping, AttrDocumentID, attrPipeline, AttrIndex:
		return true
	}
	return false
}

// Latitude and longitude attributes (geo.location.lat/lon, or with a prefix ending in a dot)
// become one geo point, [lon, lat], under <prefix>geo.location when both are doubles.
const (
	geoLat    = "geo.location.lat"
	geoLon    = "geo.location.lon"
	geoMerged = "geo.location"
)

func isGeo(key string, v pcommon.Value) bool {
	if v.Type() != pcommon.ValueTypeDouble {
		return false
	}
	return key == geoLat || key == geoLon || strings.HasSuffix(key, "."+geoLat) || strings.HasSuffix(key, "."+geoLon)
}

type geoPoint struct {
	prefix         string
	lon, lat       float64
	lonSet, latSet bool
}

// manyKeys is where duplicate detection switches from scanning the keys written to a set.
const manyKeys = 16

// keys remembers the keys written to one object, so that a duplicate key (which non-compliant
// SDKs send) is written once, its first value, instead of making the JSON invalid.
type keys struct {
	list []string
	set  map[string]struct{}
}

func (k *keys) reset() {
	k.list = k.list[:0]
	if len(k.set) > 0 {
		clear(k.set)
	}
}

// add reports whether key is new, remembering it.
func (k *keys) add(key string) bool {
	if len(k.list) < manyKeys {
		if slices.Contains(k.list, key) {
			return false
		}
		k.list = append(k.list, key)
		return true
	}
	if k.set == nil {
		k.set = make(map[string]struct{}, 2*manyKeys)
	}
	if len(k.set) == 0 {
		for _, seen := range k.list {
			k.set[seen] = struct{}{}
		}
	}
	if _, ok := k.set[key]; ok {
		return false
	}
	k.set[key] = struct{}{}
	k.list = append(k.list, key)
	return true
}

// appendAttributes appends ,"attributes":{...} unless m is empty: the control attributes left
// out, duplicates once, latitude/longitude pairs merged. eventName, when not empty, is the value
// of event.name (a span event's name replaces that attribute or is added last).
func (e *Encoder) appendAttributes(buf []byte, m pcommon.Map, first bool, eventName string) ([]byte, bool) {
	if m.Len() == 0 && eventName == "" {
		return buf, first
	}
	buf = appendKey(buf, "attributes", first)
	buf = append(buf, '{')
	e.keys.reset()
	inner, hasGeo := true, false
	for k, v := range m.All() {
		if !e.keys.add(k) || isControl(k) {
			continue
		}
		if isGeo(k, v) {
			hasGeo = true
			continue
		}
		buf = appendKey(buf, k, inner)
		inner = false
		if eventName != "" && k == "event.name" {
			buf = appendString(buf, eventName)
			continue
		}
		buf = appendValue(buf, v)
	}
	if eventName != "" && e.keys.add("event.name") {
		buf = appendKey(buf, "event.name", inner)
		buf = appendString(buf, eventName)
		inner = false
	}
	if hasGeo {
		buf = e.appendGeo(buf, m, inner)
	}
	return append(buf, '}'), false
}

// appendGeo writes the geo points of m: merged where both halves are there, else as they were.
func (e *Encoder) appendGeo(buf []byte, m pcommon.Map, first bool) []byte {
	e.geo = e.geo[:0]
	for k, v := range m.All() {
		if !isGeo(k, v) {
			continue
		}
		lat := strings.HasSuffix(k, geoLat)
		p := e.point(k[:len(k)-len(geoLat)])
		if lat {
			p.lat, p.latSet = v.Double(), true
		} else {
			p.lon, p.lonSet = v.Double(), true
		}
	}
	for _, p := range e.geo {
		if p.lonSet && p.latSet {
			buf = appendKey(buf, p.prefix+geoMerged, first)
			buf = append(buf, '[')
			buf = appendFloat(buf, p.lon)
			buf = append(buf, ',')
			buf = appendFloat(buf, p.lat)
			buf = append(buf, ']')
			first = false
			continue
		}
		if p.lonSet {
			buf = appendKey(buf, p.prefix+geoLon, first)
			buf = appendFloat(buf, p.lon)
			first = false
		}
		if p.latSet {
			buf = appendKey(buf, p.prefix+geoLat, first)
			buf = appendFloat(buf, p.lat)
			first = false
		}
	}
	return buf
}

func (e *Encoder) point(prefix string) *geoPoint {
	for i := range e.geo {
		if e.geo[i].prefix == prefix {
			return &e.geo[i]
		}
	}
	e.geo = append(e.geo, geoPoint{prefix: prefix})
	return &e.geo[len(e.geo)-1]
}
