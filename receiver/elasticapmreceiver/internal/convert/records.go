package convert

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/elastic/apm-data/model/modelpb"
)

// Errors and logs become log records. An error record carries the fields Kibana's error views
// read (processor.event: error, error.grouping_key, error.exception as a list, the
// transaction's id, name and type); Elastic's enrichment marks every other record a log.

// fillRecord sets what errors and logs share: time, ids, severity, body and the event's context.
func (c *Converter) fillRecord(r plog.LogRecord, e *modelpb.APMEvent, ts uint64) {
	r.SetTimestamp(pcommon.Timestamp(ts))
	tid, ok := traceIDOf(e.GetTrace().GetId())
	if !ok {
		c.badID("trace", e.GetTrace().GetId())
	}
	r.SetTraceID(tid)
	// The record belongs to the transaction it happened in; parent.id names the exact span.
	sid, ok := spanIDOf(e.GetTransaction().GetId())
	if !ok {
		c.badID("transaction.id", e.GetTransaction().GetId())
	}
	r.SetSpanID(sid)
	r.Body().SetStr(e.GetMessage())
	r.SetSeverityText(e.GetLog().GetLevel())
	r.SetSeverityNumber(plog.SeverityNumber(e.GetEvent().GetSeverity()))
	m := r.Attributes()
	putEventContext(m, e)
	putStr(m, "transaction.id", e.GetTransaction().GetId())
	if target := e.GetService().GetTarget(); target != nil {
		m.PutStr("service.target.type", target.Type)
		m.PutStr("service.target.name", target.Name)
	}
	putStr(m, "log.logger", e.GetLog().GetLogger())
	if o := e.GetLog().GetOrigin(); o != nil {
		putStr(m, "log.origin.function", o.FunctionName)
		if f := o.File; f != nil {
			if f.Line != 0 {
				m.PutInt("log.origin.file.line", int64(f.Line))
			}
			putStr(m, "log.origin.file.name", f.Name)
		}
	}
	if ev := e.GetEvent(); ev != nil {
		putStr(m, "event.action", ev.Action)
		putStr(m, "event.dataset", ev.Dataset)
		putStr(m, "event.category", ev.Category)
		putStr(m, "event.type", ev.Type)
	}
	putStr(m, "process.thread.name", e.GetProcess().GetThread().GetName())
}

// fillLog writes a log event's own attributes.
func fillLog(r plog.LogRecord) {
	r.Attributes().PutStr("event.kind", "event")
}

// fillError writes an error event's own attributes.
func fillError(r plog.LogRecord, e *modelpb.APMEvent) {
	m := r.Attributes()
	err := e.GetError()
	m.PutStr("processor.event", "error")
	m.PutInt("timestamp.us", int64(e.GetTimestamp()/1000))
	putStr(m, "parent.id", e.GetParentId())
	if t := e.GetTransaction(); t != nil {
		putStr(m, "transaction.name", t.Name)
		putStr(m, "transaction.type", t.Type)
		if t.Sampled {
			m.PutBool("transaction.sampled", true)
		}
	}
	putStr(m, "error.id", err.GetId())
	m.PutStr("error.grouping_key", err.GetGroupingKey())
	putStr(m, "error.culprit", err.GetCulprit())
	putStr(m, "error.message", err.GetMessage())
	putStr(m, "error.type", err.GetType())
	putStr(m, "error.stack_trace", err.GetStackTrace())
	putKeyValues(m, "error.custom", err.GetCustom())
	if l := err.GetLog(); l != nil {
		putStr(m, "error.log.message", l.Message)
		putStr(m, "error.log.level", l.Level)
		putStr(m, "error.log.param_message", l.ParamMessage)
		putStr(m, "error.log.logger_name", l.LoggerName)
		putFrames(m, "error.log.stacktrace", l.Stacktrace)
	}
	putExceptions(m, err.GetException())
}

// putExceptions writes an exception and its causes as one list in depth-first order, as
// APM Server stores them: an entry whose parent is not the entry before it names its parent's
// index.
func putExceptions(m pcommon.Map, root *modelpb.Exception) {
	if root == nil {
		return
	}
	list := m.PutEmptySlice("error.exception")
	var walk func(x *modelpb.Exception, parent int)
	walk = func(x *modelpb.Exception, parent int) {
		index := list.Len()
		item := list.AppendEmpty().SetEmptyMap()
		if index > parent+1 {
			item.PutInt("parent", int64(parent))
		}
		putStr(item, "code", x.Code)
		putStr(item, "message", x.Message)
		putStr(item, "type", x.Type)
		putStr(item, "module", x.Module)
		putFlag(item, "handled", x.Handled)
		putKeyValues(item, "attributes", x.Attributes)
		putFrames(item, "stacktrace", x.Stacktrace)
		for _, cause := range x.Cause {
			walk(cause, index)
		}
	}
	walk(root, -1)
}

// putFrames writes a stack trace, innermost frame first, as the agent sent it.
func putFrames(m pcommon.Map, key string, frames []*modelpb.StacktraceFrame) {
	if len(frames) == 0 {
		return
	}
	list := m.PutEmptySlice(key)
	list.EnsureCapacity(len(frames))
	for _, f := range frames {
		fm := list.AppendEmpty().SetEmptyMap()
		fm.PutBool("exclude_from_grouping", f.ExcludeFromGrouping)
		if f.LibraryFrame {
			fm.PutBool("library_frame", true)
		}
		putStr(fm, "abs_path", f.AbsPath)
		putStr(fm, "filename", f.Filename)
		putStr(fm, "classname", f.Classname)
		putStr(fm, "function", f.Function)
		putStr(fm, "module", f.Module)
		putCount(fm, "line.number", f.Lineno)
		putCount(fm, "line.column", f.Colno)
		putStr(fm, "line.context", f.ContextLine)
		putStrings(fm, "context.pre", f.PreContext)
		putStrings(fm, "context.post", f.PostContext)
		putKeyValues(fm, "vars", f.Vars)
	}
}
