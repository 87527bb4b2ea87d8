package convert

import (
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/collector/pdata/pcommon"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/elastic/apm-data/model/modelpb"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/spanjson"
)

// A resource holds what an agent says once per process, in the metadata line: the service,
// the agent, the host, container, orchestrator and cloud, and the global labels. What the agent
// sends per event (the user, the client, the user agent, the event's own labels) belongs to the
// span or log record, so that the events of one request share one resource.

// textField is a string the intake model holds, written under key when the agent sent it.
type textField struct {
	key string
	of  func(*modelpb.APMEvent) string
}

// resourceText lists the resource's string attributes: OpenTelemetry's names where the
// conventions have the fact, Elastic's (the APM Server field names Kibana reads) otherwise.
var resourceText = []textField{
	{string(semconv.ServiceNameKey), func(e *modelpb.APMEvent) string { return e.GetService().GetName() }},
	{string(semconv.ServiceVersionKey), func(e *modelpb.APMEvent) string { return e.GetService().GetVersion() }},
	{string(semconv.ServiceInstanceIDKey), func(e *modelpb.APMEvent) string { return e.GetService().GetNode().GetName() }},
	{string(semconv.DeploymentEnvironmentNameKey), func(e *modelpb.APMEvent) string { return e.GetService().GetEnvironment() }},
	{"agent.name", func(e *modelpb.APMEvent) string { return e.GetAgent().GetName() }},
	{"agent.version", func(e *modelpb.APMEvent) string { return e.GetAgent().GetVersion() }},
	{"agent.ephemeral_id", func(e *modelpb.APMEvent) string { return e.GetAgent().GetEphemeralId() }},
	{"agent.activation_method", func(e *modelpb.APMEvent) string { return e.GetAgent().GetActivationMethod() }},
	{"service.language.name", func(e *modelpb.APMEvent) string { return e.GetService().GetLanguage().GetName() }},
	{"service.language.version", func(e *modelpb.APMEvent) string { return e.GetService().GetLanguage().GetVersion() }},
	{"service.runtime.name", func(e *modelpb.APMEvent) string { return e.GetService().GetRuntime().GetName() }},
	{"service.runtime.version", func(e *modelpb.APMEvent) string { return e.GetService().GetRuntime().GetVersion() }},
	{"service.framework.name", func(e *modelpb.APMEvent) string { return e.GetService().GetFramework().GetName() }},
	{"service.framework.version", func(e *modelpb.APMEvent) string { return e.GetService().GetFramework().GetVersion() }},
	{"service.origin.id", func(e *modelpb.APMEvent) string { return e.GetService().GetOrigin().GetId() }},
	{"service.origin.name", func(e *modelpb.APMEvent) string { return e.GetService().GetOrigin().GetName() }},
	{"service.origin.version", func(e *modelpb.APMEvent) string { return e.GetService().GetOrigin().GetVersion() }},
	{string(semconv.HostNameKey), func(e *modelpb.APMEvent) string { return e.GetHost().GetName() }},
	{"host.hostname", func(e *modelpb.APMEvent) string { return e.GetHost().GetHostname() }},
	{string(semconv.HostIDKey), func(e *modelpb.APMEvent) string { return e.GetHost().GetId() }},
	{string(semconv.HostArchKey), func(e *modelpb.APMEvent) string { return e.GetHost().GetArchitecture() }},
	{string(semconv.OSNameKey), func(e *modelpb.APMEvent) string { return e.GetHost().GetOs().GetName() }},
	{string(semconv.OSVersionKey), func(e *modelpb.APMEvent) string { return e.GetHost().GetOs().GetVersion() }},
	{"host.os.platform", func(e *modelpb.APMEvent) string { return e.GetHost().GetOs().GetPlatform() }},
	{string(semconv.ProcessExecutableNameKey), func(e *modelpb.APMEvent) string { return e.GetProcess().GetTitle() }},
	{string(semconv.ProcessExecutablePathKey), func(e *modelpb.APMEvent) string { return e.GetProcess().GetExecutable() }},
	{string(semconv.ContainerIDKey), func(e *modelpb.APMEvent) string { return e.GetContainer().GetId() }},
	{string(semconv.ContainerNameKey), func(e *modelpb.APMEvent) string { return e.GetContainer().GetName() }},
	{string(semconv.ContainerRuntimeNameKey), func(e *modelpb.APMEvent) string { return e.GetContainer().GetRuntime() }},
	{string(semconv.ContainerImageNameKey), func(e *modelpb.APMEvent) string { return e.GetContainer().GetImageName() }},
	{string(semconv.K8SNamespaceNameKey), func(e *modelpb.APMEvent) string { return e.GetKubernetes().GetNamespace() }},
	{string(semconv.K8SNodeNameKey), func(e *modelpb.APMEvent) string { return e.GetKubernetes().GetNodeName() }},
	{string(semconv.K8SPodNameKey), func(e *modelpb.APMEvent) string { return e.GetKubernetes().GetPodName() }},
	{string(semconv.K8SPodUIDKey), func(e *modelpb.APMEvent) string { return e.GetKubernetes().GetPodUid() }},
	{string(semconv.CloudProviderKey), func(e *modelpb.APMEvent) string { return e.GetCloud().GetProvider() }},
	{string(semconv.CloudRegionKey), func(e *modelpb.APMEvent) string { return e.GetCloud().GetRegion() }},
	{string(semconv.CloudAvailabilityZoneKey), func(e *modelpb.APMEvent) string { return e.GetCloud().GetAvailabilityZone() }},
	{string(semconv.CloudAccountIDKey), func(e *modelpb.APMEvent) string { return e.GetCloud().GetAccountId() }},
	{string(semconv.CloudPlatformKey), func(e *modelpb.APMEvent) string { return e.GetCloud().GetServiceName() }},
	{"cloud.account.name", func(e *modelpb.APMEvent) string { return e.GetCloud().GetAccountName() }},
	{"cloud.instance.id", func(e *modelpb.APMEvent) string { return e.GetCloud().GetInstanceId() }},
	{"cloud.instance.name", func(e *modelpb.APMEvent) string { return e.GetCloud().GetInstanceName() }},
	{"cloud.machine.type", func(e *modelpb.APMEvent) string { return e.GetCloud().GetMachineType() }},
	{"cloud.project.id", func(e *modelpb.APMEvent) string { return e.GetCloud().GetProjectId() }},
	{"cloud.project.name", func(e *modelpb.APMEvent) string { return e.GetCloud().GetProjectName() }},
	{"cloud.origin.account.id", func(e *modelpb.APMEvent) string { return e.GetCloud().GetOrigin().GetAccountId() }},
	{"cloud.origin.provider", func(e *modelpb.APMEvent) string { return e.GetCloud().GetOrigin().GetProvider() }},
	{"cloud.origin.region", func(e *modelpb.APMEvent) string { return e.GetCloud().GetOrigin().GetRegion() }},
	{"cloud.origin.service.name", func(e *modelpb.APMEvent) string { return e.GetCloud().GetOrigin().GetServiceName() }},
	// A Lambda function's agent runs one invocation at a time: its function and invocation
	// describe the process.
	{string(semconv.FaaSInstanceKey), func(e *modelpb.APMEvent) string { return e.GetFaas().GetId() }},
	{string(semconv.FaaSNameKey), func(e *modelpb.APMEvent) string { return e.GetFaas().GetName() }},
	{string(semconv.FaaSVersionKey), func(e *modelpb.APMEvent) string { return e.GetFaas().GetVersion() }},
	{string(semconv.FaaSTriggerKey), func(e *modelpb.APMEvent) string { return e.GetFaas().GetTriggerType() }},
	{"faas.execution", func(e *modelpb.APMEvent) string { return e.GetFaas().GetExecution() }},
	{"faas.trigger.request_id", func(e *modelpb.APMEvent) string { return e.GetFaas().GetTriggerRequestId() }},
}

// sdkName is what telemetry.sdk.name says of every Elastic APM agent.
const sdkName = "ElasticAPM"

// putResource writes event's resource attributes into m.
func putResource(m pcommon.Map, e *modelpb.APMEvent) {
	for _, f := range resourceText {
		putStr(m, f.key, f.of(e))
	}
	m.PutStr(string(semconv.TelemetrySDKNameKey), sdkName)
	if lang := e.GetService().GetLanguage().GetName(); lang != "" {
		m.PutStr(string(semconv.TelemetrySDKLanguageKey), sdkLanguage(lang))
	}
	if p := e.GetProcess(); p != nil {
		if p.Pid != 0 {
			m.PutInt(string(semconv.ProcessPIDKey), int64(p.Pid))
		}
		if p.Ppid != 0 {
			m.PutInt(string(semconv.ProcessParentPIDKey), int64(p.Ppid))
		}
		putStrings(m, string(semconv.ProcessCommandArgsKey), p.Argv)
	}
	if tag := e.GetContainer().GetImageTag(); tag != "" {
		putStrings(m, string(semconv.ContainerImageTagsKey), []string{tag})
	}
	if f := e.GetFaas(); f != nil {
		putFlag(m, string(semconv.FaaSColdstartKey), f.ColdStart)
	}
	putLabels(m, e, true)
}

// sdkLanguage is the agent's language as OpenTelemetry's telemetry.sdk.language names it:
// lower case, and .NET's agent says "C#".
func sdkLanguage(lang string) string {
	lang = strings.ToLower(lang)
	if lang == "c#" {
		return "dotnet"
	}
	return lang
}

// putLabels writes the labels whose scope is global (the metadata's, true) or the event's
// (false), under Elastic's labels.* and numeric_labels.* names, which Kibana filters on.
func putLabels(m pcommon.Map, e *modelpb.APMEvent, global bool) {
	for k, v := range e.Labels {
		if k == "" || v == nil || v.Global != global {
			continue
		}
		if len(v.Values) > 0 {
			putStrings(m, labelKeys.of(k), v.Values)
		} else {
			putStr(m, labelKeys.of(k), v.Value)
		}
	}
	for k, v := range e.NumericLabels {
		if k == "" || v == nil || v.Global != global {
			continue
		}
		if len(v.Values) > 0 {
			s := m.PutEmptySlice(numericLabelKeys.of(k))
			s.EnsureCapacity(len(v.Values))
			for _, n := range v.Values {
				s.AppendEmpty().SetDouble(n)
			}
		} else {
			putNumericLabel(m, k, v.Value)
		}
	}
}

// putNumericLabel writes a single numeric label; 0 is left out (a label never set reads 0).
func putNumericLabel(m pcommon.Map, name string, v float64) {
	if v != 0 {
		m.PutDouble(numericLabelKeys.of(name), v)
	}
}

// putTags writes the labels spanjson held beside an event as putLabels writes an event's own
// labels from apm-data's maps.
func putTags(m pcommon.Map, tags []spanjson.Tag) {
	for _, t := range tags {
		switch {
		case t.Key == "":
		case t.Numeric:
			putNumericLabel(m, t.Key, t.Num)
		default:
			putStr(m, labelKeys.of(t.Key), t.Str)
		}
	}
}

// prefixedKeys remembers a label's attribute name (its prefix and its name): agents send the
// same few labels on every event, and building the name each time was an allocation per label.
type prefixedKeys struct {
	prefix string
	keys   sync.Map // label name → attribute name
	size   atomic.Int32
}

// maxPrefixedKeys and maxRememberedName bound what is remembered (label names are the agents'
// to choose); other names are built each time.
const (
	maxPrefixedKeys   = 4096
	maxRememberedName = 64
)

var (
	labelKeys        = &prefixedKeys{prefix: "labels."}
	numericLabelKeys = &prefixedKeys{prefix: "numeric_labels."}
)

func (p *prefixedKeys) of(name string) string {
	if key, ok := p.keys.Load(name); ok {
		return key.(string)
	}
	key := p.prefix + name
	if len(name) <= maxRememberedName && p.size.Load() < maxPrefixedKeys {
		// A clone: name may be a view of a request's buffer, which the map must not keep.
		if _, loaded := p.keys.LoadOrStore(strings.Clone(name), key); !loaded {
			p.size.Add(1)
		}
	}
	return key
}
