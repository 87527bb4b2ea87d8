package translator

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// tagAction is what the semconv mapping does with one Datadog meta or metric key.
type tagAction uint8

const (
	tagKeep   tagAction = iota // a user tag: kept under its own name
	tagRename                  // stored as tagRule.key
	tagDrop                    // tracer bookkeeping, or a value the resource or the status carries
	// The rest are read into spanFacts and written once the span's kind and the tags that belong
	// together are known (a URL split for server spans, a gRPC method from its parts, ...).
	tagMethod
	tagURL
	tagDBSystem
	tagMessagingSystem
	tagMessagingOperation
	tagRPCFullMethod
	tagRPCService
	tagRPCMethod
	tagRPCSystem
	tagGRPCCode
	tagAWSService
	tagAWSOperation
	tagHostPort   // "host:port": server.address and server.port
	tagTraceState // the W3C tracestate a tracer propagated: the span's trace state
	tagQueueOnly  // a generic name (offset, partition) that is a messaging tag on queue spans only
)

// valueType is the OpenTelemetry type of a renamed attribute; Datadog sends every meta value as a
// string and every metric as a double.
type valueType uint8

const (
	typeString valueType = iota
	typeInt
	typeBool
	typeStringSlice // http.request.header.<h>: string[] by the conventions
)

// tagRule is the semconv mapping of one key.
type tagRule struct {
	action tagAction
	key    string // the OpenTelemetry key (tagRename, and the target of tagQueueOnly)
	typ    valueType
}

// semconvRules are the rules of lower-case Datadog keys, built once. Keys not here are kept, but
// for tracer bookkeeping and HTTP headers (semconvRule).
var semconvRules = buildRules(semconvRuleEntries, semconvIntKeys, unifiedTagKeys)

// semconvRuleEntries are the mapping tables of the receiver's README: each rule, then the keys it
// applies to as tracers send them.
var semconvRuleEntries = []ruleEntry{
	// HTTP
	{tagRule{action: tagMethod}, []string{"http.method", "elasticsearch.method"}},
	{tagRule{action: tagURL}, []string{"http.url"}},
	{renameTyped(semconv.HTTPResponseStatusCodeKey, typeInt), []string{"http.status_code"}},
	{rename(semconv.HTTPRouteKey), []string{"http.route"}},
	{rename(semconv.UserAgentOriginalKey), []string{"http.useragent"}},
	{rename(semconv.ClientAddressKey), []string{"http.client_ip", "network.client.ip"}},
	{tagRule{action: tagHostPort}, []string{"http.host"}},
	{rename(semconv.ServerAddressKey), []string{"http.hostname", "http.server_name"}},
	{rename(semconv.NetworkProtocolVersionKey), []string{"http.version"}},
	{renameTyped(semconv.HTTPRequestBodySizeKey, typeInt), []string{"http.request.content_length"}},
	{renameTyped(semconv.HTTPResponseBodySizeKey, typeInt), []string{"http.response.content_length"}},
	{renameTyped(keyRequestHeaderPrefix+"referer", typeStringSlice), []string{"http.referer"}},

	// Databases
	{tagRule{action: tagDBSystem}, []string{"db.type", "db.system"}},
	{rename(semconv.DBNamespaceKey), []string{"db.instance", "db.name", "mongodb.db", "out.redis_db", "db.redis.dbindex", "db.redis.database_index"}},
	{rename(semconv.DBQueryTextKey), []string{"sql.query", "db.statement", "mongodb.query", "redis.raw_command", "elasticsearch.body"}},
	{rename(semconv.DBOperationNameKey), []string{"db.operation"}},
	{rename(semconv.DBCollectionNameKey), []string{"db.sql.table", "mongodb.collection", "db.mongodb.collection"}},
	{renameTyped(semconv.DBResponseReturnedRowsKey, typeInt), []string{"db.row_count", "sql.rows"}},
	{rename(semconv.DBClientConnectionPoolNameKey), []string{"db.pool.name"}},
	{rename(semconv.URLFullKey), []string{"elasticsearch.url"}},

	// Messaging
	{rename(semconv.MessagingDestinationNameKey), []string{"kafka.topic", "messaging.destination.name", "amqp.queue", "amqp.exchange", "aws.queue.name", "aws.sqs.queue_name"}},
	{rename(semconv.MessagingDestinationPartitionIDKey), []string{"kafka.partition", "messaging.kafka.partition"}},
	{queueOnly(semconv.MessagingDestinationPartitionIDKey, typeString), []string{"partition"}},
	{renameTyped(semconv.MessagingKafkaOffsetKey, typeInt), []string{"kafka.message.offset", "kafka.message_offset", "kafka.offset"}},
	{queueOnly(semconv.MessagingKafkaOffsetKey, typeInt), []string{"offset"}},
	{rename(semconv.MessagingConsumerGroupNameKey), []string{"kafka.group", "kafka.group_id"}},
	{rename(semconv.MessagingKafkaMessageKeyKey), []string{"kafka.message_key", "messaging.kafka.key"}},
	{renameTyped(semconv.MessagingKafkaMessageTombstoneKey, typeBool), []string{"kafka.tombstone"}},
	{queueOnly(semconv.MessagingKafkaMessageTombstoneKey, typeBool), []string{"tombstone"}},
	{rename(semconv.MessagingRabbitMQDestinationRoutingKeyKey), []string{"amqp.routing_key", "kombu.routing_key"}},
	{tagRule{action: tagMessagingSystem}, []string{"messaging.system"}},
	{tagRule{action: tagMessagingOperation}, []string{"messaging.operation"}},

	// RPC
	{tagRule{action: tagRPCFullMethod}, []string{"rpc.grpc.full_method", "grpc.method.name", "grpc.method.path"}},
	{tagRule{action: tagRPCService}, []string{"rpc.service", "grpc.method.service"}},
	{tagRule{action: tagRPCMethod}, []string{"rpc.method"}},
	{tagRule{action: tagAWSService}, []string{"aws.service", "aws_service"}},
	{tagRule{action: tagAWSOperation}, []string{"aws.operation"}},
	{tagRule{action: tagRPCSystem}, []string{"rpc.system"}},
	{tagRule{action: tagGRPCCode}, []string{"grpc.code", "grpc.status.code"}},
	{tagRule{action: tagDrop}, []string{"grpc.method.package"}}, // part of the fully qualified method

	// Network and peer
	{rename(semconv.ServerAddressKey), []string{"out.host", "peer.hostname", "network.destination.name"}},
	{renameTyped(semconv.ServerPortKey, typeInt), []string{"out.port", "network.destination.port", "peer.port"}},
	{rename(semconv.NetworkPeerAddressKey), []string{"network.destination.ip", "peer.ipv4", "peer.ipv6"}},

	{tagRule{action: tagTraceState}, []string{"tracestate"}},

	// What the resource (env, version, language, runtime-id, process_id), the instrumentation
	// scope (component), the span kind, or the status and exception event carry, and sampling
	// bookkeeping.
	{tagRule{action: tagDrop}, []string{
		"_sampling_priority_v1", "_sample_rate", "_top_level",
		"service", "env", "version", "language", "runtime-id", "process_id", "component", "span.kind",
		"error", "error.message", "error.msg", "error.type", "error.stack", "error.stacktrace", "error.handling_stack",
	}},
}

// semconvIntKeys are integers of the conventions a tracer sent under their OpenTelemetry names
// (OpenTelemetry API bridges, user tags): numbers travel as doubles in metrics and as strings in
// meta, and Elastic's enrichment, for one, reads only an integer status code.
var semconvIntKeys = []attribute.Key{
	semconv.HTTPResponseStatusCodeKey, semconv.HTTPRequestBodySizeKey, semconv.HTTPResponseBodySizeKey,
	semconv.ServerPortKey, semconv.ClientPortKey, semconv.NetworkPeerPortKey, semconv.NetworkLocalPortKey,
	keyRPCGRPCStatusCode, semconv.MessagingBatchMessageCountKey, semconv.ThreadIDKey, semconv.CodeLineNumberKey,
}

// unifiedTagKeys are the unified tags of containers, clouds and orchestrators, renamed as contrib
// names them (renamedKeys).
var unifiedTagKeys = []string{
	"container_id", "container_name", "image_name", "image_tag", "runtime",
	"cloud_provider", "region", "zone",
	"task_family", "task_arn", "ecs_cluster_name", "task_version", "ecs_container_name",
	"kube_container_name", "kube_cluster_name", "kube_deployment", "kube_replica_set",
	"kube_stateful_set", "kube_daemon_set", "kube_job", "kube_cronjob", "kube_namespace", "pod_name",
}

// ruleEntry is one rule of semconvRules and the Datadog keys it applies to.
type ruleEntry struct {
	rule tagRule
	keys []string
}

// buildRules makes the lookup table (TestSemconvRulesListEachKeyOnce checks that no key is listed
// twice: the tables would then depend on their order).
func buildRules(entries []ruleEntry, intKeys []attribute.Key, unified []string) *keyTable[tagRule] {
	rules := make(map[string]tagRule, 160)
	for _, e := range entries {
		for _, k := range e.keys {
			rules[k] = e.rule
		}
	}
	for _, k := range intKeys {
		rules[string(k)] = renameTyped(k, typeInt)
	}
	for _, k := range unified {
		key, _ := renamedKeys.get(k)
		rules[k] = rename(key)
	}
	return newKeyTable(rules)
}

// semconvRule returns the rule of a lower-case Datadog key.
func semconvRule(k string) tagRule {
	if k != "" && k[0] == '_' && (strings.HasPrefix(k, "_dd.") || strings.HasPrefix(k, "_dd1.")) {
		return tagRule{action: tagDrop} // tracer and agent bookkeeping
	}
	if i := semconvRules.find(k); i >= 0 {
		return semconvRules.vals[i]
	}
	// Header names are lower case in the conventions' keys.
	if rest, ok := strings.CutPrefix(k, "http.request.headers."); ok {
		return renameTyped(attribute.Key(keyRequestHeaderPrefix+strings.ToLower(rest)), typeStringSlice)
	}
	if rest, ok := strings.CutPrefix(k, "http.response.headers."); ok {
		return renameTyped(attribute.Key(keyResponseHeaderPrefix+strings.ToLower(rest)), typeStringSlice)
	}
	return tagRule{action: tagKeep}
}

func rename(key attribute.Key) tagRule { return tagRule{action: tagRename, key: string(key)} }

func renameTyped(key attribute.Key, typ valueType) tagRule {
	return tagRule{action: tagRename, key: string(key), typ: typ}
}

func queueOnly(key attribute.Key, typ valueType) tagRule {
	return tagRule{action: tagQueueOnly, key: string(key), typ: typ}
}

// semconvRuleOf looks a key up as semconvRule does, lower-casing it only when it has upper case
// letters (most keys have none).
func semconvRuleOf(k string) tagRule {
	if r := semconvRule(k); r.action != tagKeep || !hasUpper(k) {
		return r
	}
	return semconvRule(strings.ToLower(k))
}
