package convert

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/elastic/apm-data/model/modelpb"
)

// eventText lists the string attributes an event carries about its own request: who made it,
// from where, with which user agent. They are written on the span or log record.
var eventText = []textField{
	{string(semconv.UserIDKey), func(e *modelpb.APMEvent) string { return e.GetUser().GetId() }},
	{string(semconv.UserEmailKey), func(e *modelpb.APMEvent) string { return e.GetUser().GetEmail() }},
	{string(semconv.UserNameKey), func(e *modelpb.APMEvent) string { return e.GetUser().GetName() }},
	{"user.domain", func(e *modelpb.APMEvent) string { return e.GetUser().GetDomain() }},
	{string(semconv.UserAgentOriginalKey), func(e *modelpb.APMEvent) string { return e.GetUserAgent().GetOriginal() }},
	{string(semconv.ClientAddressKey), func(e *modelpb.APMEvent) string { return ipString(e.GetClient().GetIp()) }},
	{string(semconv.SourceAddressKey), func(e *modelpb.APMEvent) string { return ipString(e.GetSource().GetIp()) }},
	{"source.nat.ip", func(e *modelpb.APMEvent) string { return ipString(e.GetSource().GetNat().GetIp()) }},
	{string(semconv.NetworkConnectionTypeKey), func(e *modelpb.APMEvent) string { return e.GetNetwork().GetConnection().GetType() }},
	{string(semconv.NetworkConnectionSubtypeKey), func(e *modelpb.APMEvent) string { return e.GetNetwork().GetConnection().GetSubtype() }},
	{string(semconv.NetworkCarrierNameKey), func(e *modelpb.APMEvent) string { return e.GetNetwork().GetCarrier().GetName() }},
	{string(semconv.NetworkCarrierMCCKey), func(e *modelpb.APMEvent) string { return e.GetNetwork().GetCarrier().GetMcc() }},
	{string(semconv.NetworkCarrierMNCKey), func(e *modelpb.APMEvent) string { return e.GetNetwork().GetCarrier().GetMnc() }},
	{string(semconv.NetworkCarrierICCKey), func(e *modelpb.APMEvent) string { return e.GetNetwork().GetCarrier().GetIcc() }},
	{string(semconv.URLOriginalKey), func(e *modelpb.APMEvent) string { return e.GetUrl().GetOriginal() }},
	{string(semconv.URLSchemeKey), func(e *modelpb.APMEvent) string { return e.GetUrl().GetScheme() }},
	{string(semconv.URLFullKey), func(e *modelpb.APMEvent) string { return e.GetUrl().GetFull() }},
	{string(semconv.URLDomainKey), func(e *modelpb.APMEvent) string { return e.GetUrl().GetDomain() }},
	{string(semconv.URLPathKey), func(e *modelpb.APMEvent) string { return e.GetUrl().GetPath() }},
	{string(semconv.URLQueryKey), func(e *modelpb.APMEvent) string { return e.GetUrl().GetQuery() }},
	{string(semconv.URLFragmentKey), func(e *modelpb.APMEvent) string { return e.GetUrl().GetFragment() }},
}

// putRequester writes the user and client of an event (the eventText attributes but the URL's).
// A metricset's carry them on its resource: they are a series' dimensions there.
func putRequester(m pcommon.Map, e *modelpb.APMEvent) {
	for _, f := range eventText {
		if !strings.HasPrefix(f.key, "url.") {
			putStr(m, f.key, f.of(e))
		}
	}
}

// putEventContext writes the event's own context: the attributes above, ports, HTTP, and the
// labels the agent set on this event.
func putEventContext(m pcommon.Map, e *modelpb.APMEvent) {
	if e.User != nil || e.UserAgent != nil || e.Client != nil || e.Source != nil || e.Network != nil || e.Url != nil {
		for _, f := range eventText { // a span seldom has any of them: not looked up one by one
			putStr(m, f.key, f.of(e))
		}
	}
	putPort(m, string(semconv.ClientPortKey), e.GetClient().GetPort())
	putPort(m, string(semconv.SourcePortKey), e.GetSource().GetPort())
	putPort(m, string(semconv.URLPortKey), e.GetUrl().GetPort())
	putHTTP(m, e.GetHttp())
	putLabels(m, e, false)
}

func putPort(m pcommon.Map, key string, port uint32) {
	if port != 0 {
		m.PutInt(key, int64(port))
	}
}

// putHTTP writes an HTTP exchange: the conventions' method, status and size, and what
// Elastic agents capture beyond them (headers, cookies, body, timing flags).
func putHTTP(m pcommon.Map, h *modelpb.HTTP) {
	if h == nil {
		return
	}
	putStr(m, "http.version", h.Version)
	if req := h.Request; req != nil {
		putStr(m, string(semconv.HTTPRequestMethodKey), req.Method)
		putHeaders(m, "http.request.headers", req.Headers)
		putKeyValues(m, "http.request.env", req.Env)
		putKeyValues(m, "http.request.cookies", req.Cookies)
		if req.Body != nil {
			setJSONValue(m.PutEmpty("http.request.body.original"), req.Body)
		}
		putStr(m, "http.request.id", req.Id)
		putStr(m, "http.request.referrer", req.Referrer)
	}
	if resp := h.Response; resp != nil {
		if resp.StatusCode != 0 {
			m.PutInt(string(semconv.HTTPResponseStatusCodeKey), int64(resp.StatusCode))
		}
		putCount(m, string(semconv.HTTPResponseBodySizeKey), resp.EncodedBodySize)
		putHeaders(m, "http.response.headers", resp.Headers)
		putFlag(m, "http.response.finished", resp.Finished)
		putFlag(m, "http.response.headers_sent", resp.HeadersSent)
		putCount(m, "http.response.decoded_body_size", resp.DecodedBodySize)
		putCount(m, "http.response.transfer_size", resp.TransferSize)
	}
}
