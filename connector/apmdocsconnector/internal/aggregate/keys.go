package aggregate

import "github.com/elastic/apm-data/model/modelpb"

// serviceKey: the fields every metricset of a service carries (APM Server's service key,
// without global labels).
type serviceKey struct {
	name, environment, language, agent string
}

// transactionKey: what a transaction metricset is grouped by, APM Server's transaction group.
type transactionKey struct {
	root                                                bool
	containerID, podName                                string
	version, nodeName                                   string
	runtimeName, runtimeVersion, languageVersion        string
	hostHostname, hostName, osPlatform                  string
	outcome                                             string
	name, typ, result                                   string
	faasColdstart                                       string // "", "true" or "false"
	faasID, faasName, faasVersion, faasTrigger          string
	cloudProvider, cloudRegion, cloudZone, cloudService string
	cloudAccountID, cloudAccountName, cloudMachine      string
	cloudProjectID, cloudProjectName                    string
}

// spanKey: what a service destination metricset is grouped by.
type spanKey struct {
	name, outcome, targetType, targetName, resource string
}

func serviceKeyOf(e *modelpb.APMEvent) serviceKey {
	return serviceKey{
		name: e.GetService().GetName(), environment: e.GetService().GetEnvironment(),
		language: e.GetService().GetLanguage().GetName(), agent: e.GetAgent().GetName(),
	}
}

func transactionKeyOf(e *modelpb.APMEvent) transactionKey {
	svc, host, faas, cloud := e.GetService(), e.GetHost(), e.GetFaas(), e.GetCloud()
	k := transactionKey{
		root:        e.GetParentId() == "",
		containerID: e.GetContainer().GetId(), podName: e.GetKubernetes().GetPodName(),
		version: svc.GetVersion(), nodeName: svc.GetNode().GetName(),
		runtimeName: svc.GetRuntime().GetName(), runtimeVersion: svc.GetRuntime().GetVersion(),
		languageVersion: svc.GetLanguage().GetVersion(),
		hostHostname:    host.GetHostname(), hostName: host.GetName(), osPlatform: host.GetOs().GetPlatform(),
		outcome: e.GetEvent().GetOutcome(),
		name:    e.GetTransaction().GetName(), typ: e.GetTransaction().GetType(), result: e.GetTransaction().GetResult(),
		faasID: faas.GetId(), faasName: faas.GetName(), faasVersion: faas.GetVersion(), faasTrigger: faas.GetTriggerType(),
		cloudProvider: cloud.GetProvider(), cloudRegion: cloud.GetRegion(), cloudZone: cloud.GetAvailabilityZone(),
		cloudService: cloud.GetServiceName(), cloudAccountID: cloud.GetAccountId(), cloudAccountName: cloud.GetAccountName(),
		cloudMachine: cloud.GetMachineType(), cloudProjectID: cloud.GetProjectId(), cloudProjectName: cloud.GetProjectName(),
	}
	if faas != nil && faas.ColdStart != nil {
		k.faasColdstart = "false"
		if *faas.ColdStart {
			k.faasColdstart = "true"
		}
	}
	return k
}

func spanKeyOf(e *modelpb.APMEvent) spanKey {
	target := e.GetService().GetTarget()
	return spanKey{
		name: e.GetSpan().GetName(), outcome: e.GetEvent().GetOutcome(),
		targetType: target.GetType(), targetName: target.GetName(),
		resource: e.GetSpan().GetDestinationService().GetResource(),
	}
}

// base is a metricset event with its service's fields.
func (k serviceKey) base(timestamp uint64, name, interval string, docCount uint64) *modelpb.APMEvent {
	e := &modelpb.APMEvent{
		Timestamp: timestamp,
		Service:   &modelpb.Service{Name: k.name, Environment: k.environment},
		Metricset: &modelpb.Metricset{Name: name, Interval: interval, DocCount: docCount},
		Event:     &modelpb.Event{},
	}
	if k.language != "" {
		e.Service.Language = &modelpb.Language{Name: k.language}
	}
	if k.agent != "" {
		e.Agent = &modelpb.Agent{Name: k.agent}
	}
	return e
}

// fill writes a transaction group's fields onto its metricset event.
func (k transactionKey) fill(e *modelpb.APMEvent) {
	e.ParentId = ""
	e.Transaction.Name, e.Transaction.Type, e.Transaction.Result, e.Transaction.Root = k.name, k.typ, k.result, k.root
	e.Event.Outcome = k.outcome
	if k.containerID != "" {
		e.Container = &modelpb.Container{Id: k.containerID}
	}
	if k.podName != "" {
		e.Kubernetes = &modelpb.Kubernetes{PodName: k.podName}
	}
	e.Service.Version = k.version
	if k.nodeName != "" {
		e.Service.Node = &modelpb.ServiceNode{Name: k.nodeName}
	}
	if k.runtimeName != "" || k.runtimeVersion != "" {
		e.Service.Runtime = &modelpb.Runtime{Name: k.runtimeName, Version: k.runtimeVersion}
	}
	if k.languageVersion != "" {
		if e.Service.Language == nil {
			e.Service.Language = &modelpb.Language{}
		}
		e.Service.Language.Version = k.languageVersion
	}
	if k.hostHostname != "" || k.hostName != "" || k.osPlatform != "" {
		e.Host = &modelpb.Host{Hostname: k.hostHostname, Name: k.hostName}
		if k.osPlatform != "" {
			e.Host.Os = &modelpb.OS{Platform: k.osPlatform}
		}
	}
	k.fillFaasCloud(e)
}

func (k transactionKey) fillFaasCloud(e *modelpb.APMEvent) {
	if anySet(k.faasColdstart, k.faasID, k.faasName, k.faasVersion, k.faasTrigger) {
		e.Faas = &modelpb.Faas{Id: k.faasID, Name: k.faasName, Version: k.faasVersion, TriggerType: k.faasTrigger}
		if k.faasColdstart != "" {
			cold := k.faasColdstart == "true"
			e.Faas.ColdStart = &cold
		}
	}
	c := &modelpb.Cloud{
		Provider: k.cloudProvider, Region: k.cloudRegion, AvailabilityZone: k.cloudZone, ServiceName: k.cloudService,
		AccountId: k.cloudAccountID, AccountName: k.cloudAccountName, MachineType: k.cloudMachine,
		ProjectId: k.cloudProjectID, ProjectName: k.cloudProjectName,
	}
	if anySet(c.Provider, c.Region, c.AvailabilityZone, c.ServiceName, c.AccountId, c.AccountName,
		c.MachineType, c.ProjectId, c.ProjectName) {
		e.Cloud = c
	}
}

func anySet(values ...string) bool {
	for _, v := range values {
		if v != "" {
			return true
		}
	}
	return false
}
