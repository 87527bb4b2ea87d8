package translator

import "strings"

// renamedKey renames Datadog tag keys to OpenTelemetry semantic convention keys (matched on the
// lower-cased key), the same table contrib's datadogreceiver uses, so documents look the same
// whichever receiver produced them. (A switch, not a map: it runs for every meta and metric key,
// and the compiled switch is about three times faster than a map lookup.)
func renamedKey(k string) (string, bool) {
	switch k {
	case "env":
		return "deployment.environment.name", true
	case "service":
		return "service.name", true
	case "version":
		return "service.version", true

	case "container_id":
		return "container.id", true
	case "container_name":
		return "container.name", true
	case "image_name":
		return "container.image.name", true
	case "image_tag":
		return "container.image.tags", true
	case "runtime":
		return "container.runtime.name", true

	case "cloud_provider":
		return "cloud.provider", true
	case "region":
		return "cloud.region", true
	case "zone":
		return "cloud.availability_zone", true

	case "task_family":
		return "aws.ecs.task.family", true
	case "task_arn":
		return "aws.ecs.task.arn", true
	case "ecs_cluster_name":
		return "aws.ecs.cluster.arn", true
	case "task_version":
		return "aws.ecs.task.revision", true
	case "ecs_container_name":
		return "aws.ecs.container.arn", true

	case "kube_container_name":
		return "k8s.container.name", true
	case "kube_cluster_name":
		return "k8s.cluster.name", true
	case "kube_deployment":
		return "k8s.deployment.name", true
	case "kube_replica_set":
		return "k8s.replicaset.name", true
	case "kube_stateful_set":
		return "k8s.statefulset.name", true
	case "kube_daemon_set":
		return "k8s.daemonset.name", true
	case "kube_job":
		return "k8s.job.name", true
	case "kube_cronjob":
		return "k8s.cronjob.name", true
	case "kube_namespace":
		return "k8s.namespace.name", true
	case "pod_name":
		return "k8s.pod.name", true

	case "http.client_ip":
		return "client.address", true
	case "http.response.content_length":
		return "http.response.body.size", true
	case "http.status_code":
		return "http.response.status_code", true
	case "http.request.content_length":
		return "http.request.body.size", true
	case "http.referer":
		return "http.request.header.referer", true
	case "http.method":
		return "http.request.method", true
	case "http.route":
		return "http.route", true
	case "http.version":
		return "network.protocol.version", true
	case "http.server_name":
		return "server.address", true
	case "http.url":
		return "url.full", true
	case "http.useragent":
		return "user_agent.original", true

	case "aws.s3.bucket_name":
		return "aws.s3.bucket", true
	case "aws.response.request_id":
		return "aws.request_id", true
	case "aws.service":
		return "rpc.service", true
	case "aws.operation":
		return "rpc.method", true

	case "db.type":
		return "db.system.name", true
	case "db.operation":
		return "db.operation.name", true
	case "db.instance":
		return "db.namespace", true
	case "db.sql.table":
		return "db.collection.name", true
	case "db.pool.name":
		return "db.client.connection.pool.name", true
	case "db.statement":
		return "db.query.text", true

	case "process_id":
		return "process.pid", true
	case "error.stacktrace":
		return "exception.stacktrace", true
	case "error.msg":
		return "exception.message", true
	}
	return "", false
}

// isIntKey tells the OpenTelemetry attributes that are integers by specification: Datadog sends
// them as strings (meta) or doubles (metrics), and contrib keeps those types; we store ints when
// the value is integral. (A switch, not a map: it runs for every attribute.)
func isIntKey(k string) bool {
	switch k {
	case "http.response.status_code", "http.request.body.size", "http.response.body.size", "process.pid":
		return true
	}
	return false
}

// otelKey translates a Datadog key. It runs for every meta and metric key, so the common case —
// a lower-case key that is not renamed — costs one switch.
func otelKey(k string) string {
	if v, ok := renamedKey(k); ok {
		return v
	}
	if hasUpper(k) {
		if v, ok := renamedKey(strings.ToLower(k)); ok {
			return v
		}
	}
	if !strings.HasPrefix(k, "http.") {
		return k
	}
	if rest, ok := strings.CutPrefix(k, "http.response.headers."); ok {
		return "http.response.header." + rest
	}
	if rest, ok := strings.CutPrefix(k, "http.request.headers."); ok {
		return "http.request.header." + rest
	}
	return k
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			return true
		}
	}
	return false
}
