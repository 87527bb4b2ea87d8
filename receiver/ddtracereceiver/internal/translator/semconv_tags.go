package translator

import "strings"

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

// semconvRuleEntries are the mapping tables of the receiver's README.
var semconvRuleEntries = []ruleEntry{
	// HTTP
	{tagRule{action: tagMethod}, []string{"http.method", "elasticsearch.method"}},
	{tagRule{action: tagURL}, []string{"http.url"}},
	{renameTyped("http.response.status_code", typeInt), []string{"http.status_code"}},
	{rename("http.route"), []string{"http.route"}},
	{rename("user_agent.original"), []string{"http.useragent"}},
	{rename("client.address"), []string{"http.client_ip", "network.client.ip"}},
	{tagRule{action: tagHostPort}, []string{"http.host"}},
	{rename("server.address"), []string{"http.hostname", "http.server_name"}},
	{rename("network.protocol.version"), []string{"http.version"}},
	{renameTyped("http.request.body.size", typeInt), []string{"http.request.content_length"}},
	{renameTyped("http.response.body.size", typeInt), []string{"http.response.content_length"}},
	{renameTyped("http.request.header.referer", typeStringSlice), []string{"http.referer"}},

	// Databases
	{tagRule{action: tagDBSystem}, []string{"db.type", "db.system"}},
	{rename("db.namespace"), []string{"db.instance", "db.name", "mongodb.db", "out.redis_db", "db.redis.dbindex", "db.redis.database_index"}},
	{rename("db.query.text"), []string{"sql.query", "db.statement", "mongodb.query", "redis.raw_command", "elasticsearch.body"}},
	{rename("db.operation.name"), []string{"db.operation"}},
	{rename("db.collection.name"), []string{"db.sql.table", "mongodb.collection", "db.mongodb.collection"}},
	{renameTyped("db.response.returned_rows", typeInt), []string{"db.row_count", "sql.rows"}},
	{rename("db.client.connection.pool.name"), []string{"db.pool.name"}},
	{rename("url.full"), []string{"elasticsearch.url"}},

	// Messaging
	{rename("messaging.destination.name"), []string{"kafka.topic", "messaging.destination.name", "amqp.queue", "amqp.exchange", "aws.queue.name", "aws.sqs.queue_name"}},
	{rename("messaging.destination.partition.id"), []string{"kafka.partition", "messaging.kafka.partition"}},
	{tagRule{action: tagQueueOnly, key: "messaging.destination.partition.id"}, []string{"partition"}},
	{renameTyped("messaging.kafka.offset", typeInt), []string{"kafka.message.offset", "kafka.message_offset", "kafka.offset"}},
	{tagRule{action: tagQueueOnly, key: "messaging.kafka.offset", typ: typeInt}, []string{"offset"}},
	{rename("messaging.consumer.group.name"), []string{"kafka.group", "kafka.group_id"}},
	{rename("messaging.kafka.message.key"), []string{"kafka.message_key", "messaging.kafka.key"}},
	{renameTyped("messaging.kafka.message.tombstone", typeBool), []string{"kafka.tombstone"}},
	{tagRule{action: tagQueueOnly, key: "messaging.kafka.message.tombstone", typ: typeBool}, []string{"tombstone"}},
	{rename("messaging.rabbitmq.destination.routing_key"), []string{"amqp.routing_key", "kombu.routing_key"}},
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
	{rename("server.address"), []string{"out.host", "peer.hostname", "network.destination.name"}},
	{renameTyped("server.port", typeInt), []string{"out.port", "network.destination.port", "peer.port"}},
	{rename("network.peer.address"), []string{"network.destination.ip", "peer.ipv4", "peer.ipv6"}},

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
var semconvIntKeys = []string{
	"http.response.status_code", "http.request.body.size", "http.response.body.size",
	"server.port", "client.port", "network.peer.port", "network.local.port",
	"rpc.grpc.status_code", "messaging.batch.message_count", "thread.id", "code.line.number",
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
func buildRules(entries []ruleEntry, intKeys, unified []string) *keyTable[tagRule] {
	rules := make(map[string]tagRule, 160)
	for _, e := range entries {
		for _, k := range e.keys {
			rules[k] = e.rule
		}
	}
	for _, k := range intKeys {
		rules[k] = renameTyped(k, typeInt)
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
		return renameTyped("http.request.header."+strings.ToLower(rest), typeStringSlice)
	}
	if rest, ok := strings.CutPrefix(k, "http.response.headers."); ok {
		return renameTyped("http.response.header."+strings.ToLower(rest), typeStringSlice)
	}
	return tagRule{action: tagKeep}
}

func rename(key string) tagRule { return tagRule{action: tagRename, key: key} }

func renameTyped(key string, typ valueType) tagRule {
	return tagRule{action: tagRename, key: key, typ: typ}
}

// semconvRuleOf looks a key up as semconvRule does, lower-casing it only when it has upper case
// letters (most keys have none).
func semconvRuleOf(k string) tagRule {
	if r := semconvRule(k); r.action != tagKeep || !hasUpper(k) {
		return r
	}
	return semconvRule(strings.ToLower(k))
}
