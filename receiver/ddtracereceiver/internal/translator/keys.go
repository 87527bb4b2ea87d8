package translator

import "strings"

// renamedKeys rename Datadog tag keys to OpenTelemetry semantic convention keys (matched on the
// lower-cased key), the same table contrib's datadogreceiver uses, so documents look the same
// whichever receiver produced them.
var renamedKeys = newKeyTable(map[string]string{
	"env":     "deployment.environment.name",
	"service": "service.name",
	"version": "service.version",

	"container_id":   "container.id",
	"container_name": "container.name",
	"image_name":     "container.image.name",
	"image_tag":      "container.image.tags",
	"runtime":        "container.runtime.name",

	"cloud_provider": "cloud.provider",
	"region":         "cloud.region",
	"zone":           "cloud.availability_zone",

	"task_family":        "aws.ecs.task.family",
	"task_arn":           "aws.ecs.task.arn",
	"ecs_cluster_name":   "aws.ecs.cluster.arn",
	"task_version":       "aws.ecs.task.revision",
	"ecs_container_name": "aws.ecs.container.arn",

	"kube_container_name": "k8s.container.name",
	"kube_cluster_name":   "k8s.cluster.name",
	"kube_deployment":     "k8s.deployment.name",
	"kube_replica_set":    "k8s.replicaset.name",
	"kube_stateful_set":   "k8s.statefulset.name",
	"kube_daemon_set":     "k8s.daemonset.name",
	"kube_job":            "k8s.job.name",
	"kube_cronjob":        "k8s.cronjob.name",
	"kube_namespace":      "k8s.namespace.name",
	"pod_name":            "k8s.pod.name",

	"http.client_ip":               "client.address",
	"http.response.content_length": "http.response.body.size",
	"http.status_code":             "http.response.status_code",
	"http.request.content_length":  "http.request.body.size",
	"http.referer":                 "http.request.header.referer",
	"http.method":                  "http.request.method",
	"http.route":                   "http.route",
	"http.version":                 "network.protocol.version",
	"http.server_name":             "server.address",
	"http.url":                     "url.full",
	"http.useragent":               "user_agent.original",

	"aws.s3.bucket_name":      "aws.s3.bucket",
	"aws.response.request_id": "aws.request_id",
	"aws.service":             "rpc.service",
	"aws.operation":           "rpc.method",

	"db.type":      "db.system.name",
	"db.operation": "db.operation.name",
	"db.instance":  "db.namespace",
	"db.sql.table": "db.collection.name",
	"db.pool.name": "db.client.connection.pool.name",
	"db.statement": "db.query.text",

	"process_id":       "process.pid",
	"error.stacktrace": "exception.stacktrace",
	"error.msg":        "exception.message",
})

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
// a lower-case key that is not renamed — costs one table lookup.
func otelKey(k string) string {
	if i := renamedKeys.find(k); i >= 0 {
		return renamedKeys.vals[i]
	}
	if hasUpper(k) {
		if i := renamedKeys.find(strings.ToLower(k)); i >= 0 {
			return renamedKeys.vals[i]
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
