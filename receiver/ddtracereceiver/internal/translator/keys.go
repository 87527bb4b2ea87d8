package translator

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// Keys of attributes the translator writes that semantic conventions 1.40.0 does not define; every
// other key it writes is the conventions' constant. Datadog's tag names stay literals, even where
// one is also a key of the conventions (http.route, error.type): they name what tracers send.
const (
	// Datadog's names, as Datadog's own OTLP exporters write them (its agent reads them back).
	keyOperationName = "operation.name" // the Datadog operation name (http.request, ...)
	keyResourceName  = "resource.name"  // the Datadog resource (GET /users/:id, the SQL statement)
	keySpanType      = "span.type"      // web, sql, cache, ...
	// keySamplingPriority is the chunk's sampling priority (the conventions have none): the
	// tracesampling processor reads the tracer's decision from it.
	keySamplingPriority = "sampling.priority"
	// keyPeerService is what Elastic's APM enrichment reads for the service a span calls; its
	// successor in the conventions, service.peer.name, is not yet stable.
	keyPeerService = "peer.service"
	// keyMetaStructPrefix prefixes meta_struct entries (msgpack blobs, kept as bytes), which have
	// no counterpart in the conventions.
	keyMetaStructPrefix = "dd.meta_struct."
	// The conventions' HTTP header attributes are templates (http.request.header.<name>): there is
	// a function for the attribute but no constant for the key.
	keyRequestHeaderPrefix  = "http.request.header."
	keyResponseHeaderPrefix = "http.response.header."

	// The datadogreceiver mapping's own names, as contrib writes them.
	keyDDSpanResource = "dd.span.Resource" // the Datadog resource
	keyDatadogSpanID  = "datadog.span.id"  // the span id in decimal, as Datadog shows it
	keyDatadogTraceID = "datadog.trace.id" // the trace id's low 64 bits in decimal
	// keyRPCService is the RPC service, which the conventions fold into rpc.method since 1.39.0.
	keyRPCService = "rpc.service"

	// keyRPCGRPCStatusCode is the gRPC status code (an integer) of the conventions before 1.39.0:
	// OpenTelemetry API bridges and user tags still send it.
	keyRPCGRPCStatusCode = "rpc.grpc.status_code"
)

// renamedKeys rename Datadog tag keys to OpenTelemetry semantic convention keys (matched on the
// lower-cased key), the same table contrib's datadogreceiver uses, so documents look the same
// whichever receiver produced them.
var renamedKeys = newKeyTable(map[string]attribute.Key{
	"env":     semconv.DeploymentEnvironmentNameKey,
	"service": semconv.ServiceNameKey,
	"version": semconv.ServiceVersionKey,

	"container_id":   semconv.ContainerIDKey,
	"container_name": semconv.ContainerNameKey,
	"image_name":     semconv.ContainerImageNameKey,
	"image_tag":      semconv.ContainerImageTagsKey,
	"runtime":        semconv.ContainerRuntimeNameKey,

	"cloud_provider": semconv.CloudProviderKey,
	"region":         semconv.CloudRegionKey,
	"zone":           semconv.CloudAvailabilityZoneKey,

	"task_family":        semconv.AWSECSTaskFamilyKey,
	"task_arn":           semconv.AWSECSTaskARNKey,
	"ecs_cluster_name":   semconv.AWSECSClusterARNKey,
	"task_version":       semconv.AWSECSTaskRevisionKey,
	"ecs_container_name": semconv.AWSECSContainerARNKey,

	"kube_container_name": semconv.K8SContainerNameKey,
	"kube_cluster_name":   semconv.K8SClusterNameKey,
	"kube_deployment":     semconv.K8SDeploymentNameKey,
	"kube_replica_set":    semconv.K8SReplicaSetNameKey,
	"kube_stateful_set":   semconv.K8SStatefulSetNameKey,
	"kube_daemon_set":     semconv.K8SDaemonSetNameKey,
	"kube_job":            semconv.K8SJobNameKey,
	"kube_cronjob":        semconv.K8SCronJobNameKey,
	"kube_namespace":      semconv.K8SNamespaceNameKey,
	"pod_name":            semconv.K8SPodNameKey,

	"http.client_ip":               semconv.ClientAddressKey,
	"http.response.content_length": semconv.HTTPResponseBodySizeKey,
	"http.status_code":             semconv.HTTPResponseStatusCodeKey,
	"http.request.content_length":  semconv.HTTPRequestBodySizeKey,
	"http.referer":                 keyRequestHeaderPrefix + "referer",
	"http.method":                  semconv.HTTPRequestMethodKey,
	"http.route":                   semconv.HTTPRouteKey,
	"http.version":                 semconv.NetworkProtocolVersionKey,
	"http.server_name":             semconv.ServerAddressKey,
	"http.url":                     semconv.URLFullKey,
	"http.useragent":               semconv.UserAgentOriginalKey,

	"aws.s3.bucket_name":      semconv.AWSS3BucketKey,
	"aws.response.request_id": semconv.AWSRequestIDKey,
	"aws.service":             keyRPCService,
	"aws.operation":           semconv.RPCMethodKey,

	"db.type":      semconv.DBSystemNameKey,
	"db.operation": semconv.DBOperationNameKey,
	"db.instance":  semconv.DBNamespaceKey,
	"db.sql.table": semconv.DBCollectionNameKey,
	"db.pool.name": semconv.DBClientConnectionPoolNameKey,
	"db.statement": semconv.DBQueryTextKey,

	"process_id":       semconv.ProcessPIDKey,
	"error.stacktrace": semconv.ExceptionStacktraceKey,
	"error.msg":        semconv.ExceptionMessageKey,
})

// isIntKey tells the OpenTelemetry attributes that are integers by specification: Datadog sends
// them as strings (meta) or doubles (metrics), and contrib keeps those types; we store ints when
// the value is integral. (A switch, not a map: it runs for every attribute.)
func isIntKey(k string) bool {
	switch k {
	case string(semconv.HTTPResponseStatusCodeKey), string(semconv.HTTPRequestBodySizeKey),
		string(semconv.HTTPResponseBodySizeKey), string(semconv.ProcessPIDKey):
		return true
	}
	return false
}

// otelKey translates a Datadog key. It runs for every meta and metric key, so the common case —
// a lower-case key that is not renamed — costs one table lookup.
func otelKey(k string) string {
	if i := renamedKeys.find(k); i >= 0 {
		return string(renamedKeys.vals[i])
	}
	if hasUpper(k) {
		if i := renamedKeys.find(strings.ToLower(k)); i >= 0 {
			return string(renamedKeys.vals[i])
		}
	}
	if !strings.HasPrefix(k, "http.") {
		return k
	}
	if rest, ok := strings.CutPrefix(k, "http.response.headers."); ok {
		return keyResponseHeaderPrefix + rest
	}
	if rest, ok := strings.CutPrefix(k, "http.request.headers."); ok {
		return keyRequestHeaderPrefix + rest
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
