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

// semconvRule returns the rule of a lower-case Datadog key: the mapping tables of the receiver's
// README. One switch, not a map or a chain of switches: it runs for every tag, and the compiled
// switch (a binary search over the cases) is several times faster.
func semconvRule(k string) tagRule {
	if k != "" && k[0] == '_' && (strings.HasPrefix(k, "_dd.") || strings.HasPrefix(k, "_dd1.")) {
		return tagRule{action: tagDrop} // tracer and agent bookkeeping
	}
	switch k {
	// HTTP
	case "http.method", "elasticsearch.method":
		return tagRule{action: tagMethod}
	case "http.url":
		return tagRule{action: tagURL}
	case "http.status_code":
		return renameTyped("http.response.status_code", typeInt)
	case "http.route":
		return rename("http.route")
	case "http.useragent":
		return rename("user_agent.original")
	case "http.client_ip", "network.client.ip":
		return rename("client.address")
	case "http.host":
		return tagRule{action: tagHostPort}
	case "http.hostname", "http.server_name":
		return rename("server.address")
	case "http.version":
		return rename("network.protocol.version")
	case "http.request.content_length":
		return renameTyped("http.request.body.size", typeInt)
	case "http.response.content_length":
		return renameTyped("http.response.body.size", typeInt)
	case "http.referer":
		return renameTyped("http.request.header.referer", typeStringSlice)

	// Databases
	case "db.type", "db.system":
		return tagRule{action: tagDBSystem}
	case "db.instance", "db.name", "mongodb.db", "out.redis_db", "db.redis.dbindex", "db.redis.database_index":
		return rename("db.namespace")
	case "sql.query", "db.statement", "mongodb.query", "redis.raw_command", "elasticsearch.body":
		return rename("db.query.text")
	case "db.operation":
		return rename("db.operation.name")
	case "db.sql.table", "mongodb.collection", "db.mongodb.collection":
		return rename("db.collection.name")
	case "db.row_count", "sql.rows":
		return renameTyped("db.response.returned_rows", typeInt)
	case "db.pool.name":
		return rename("db.client.connection.pool.name")
	case "elasticsearch.url":
		return rename("url.full")

	// Messaging
	case "kafka.topic", "messaging.destination.name", "amqp.queue", "amqp.exchange", "aws.queue.name", "aws.sqs.queue_name":
		return rename("messaging.destination.name")
	case "kafka.partition", "messaging.kafka.partition":
		return rename("messaging.destination.partition.id")
	case "partition":
		return tagRule{action: tagQueueOnly, key: "messaging.destination.partition.id"}
	case "kafka.message.offset", "kafka.message_offset", "kafka.offset":
		return renameTyped("messaging.kafka.offset", typeInt)
	case "offset":
		return tagRule{action: tagQueueOnly, key: "messaging.kafka.offset", typ: typeInt}
	case "kafka.group", "kafka.group_id":
		return rename("messaging.consumer.group.name")
	case "kafka.message_key", "messaging.kafka.key":
		return rename("messaging.kafka.message.key")
	case "kafka.tombstone":
		return renameTyped("messaging.kafka.message.tombstone", typeBool)
	case "tombstone":
		return tagRule{action: tagQueueOnly, key: "messaging.kafka.message.tombstone", typ: typeBool}
	case "amqp.routing_key", "kombu.routing_key":
		return rename("messaging.rabbitmq.destination.routing_key")
	case "messaging.system":
		return tagRule{action: tagMessagingSystem}
	case "messaging.operation":
		return tagRule{action: tagMessagingOperation}

	// RPC
	case "rpc.grpc.full_method", "grpc.method.name", "grpc.method.path":
		return tagRule{action: tagRPCFullMethod}
	case "rpc.service", "grpc.method.service":
		return tagRule{action: tagRPCService}
	case "rpc.method":
		return tagRule{action: tagRPCMethod}
	case "aws.service", "aws_service":
		return tagRule{action: tagAWSService}
	case "aws.operation":
		return tagRule{action: tagAWSOperation}
	case "rpc.system":
		return tagRule{action: tagRPCSystem}
	case "grpc.code", "grpc.status.code":
		return tagRule{action: tagGRPCCode}
	case "grpc.method.package":
		return tagRule{action: tagDrop} // part of the fully qualified method

	// Network and peer
	case "out.host", "peer.hostname", "network.destination.name":
		return rename("server.address")
	case "out.port", "network.destination.port", "peer.port":
		return renameTyped("server.port", typeInt)
	case "network.destination.ip", "peer.ipv4", "peer.ipv6":
		return rename("network.peer.address")

	// Integers of the conventions a tracer sent under their OpenTelemetry names (OpenTelemetry API
	// bridges, user tags): numbers travel as doubles in metrics and as strings in meta, and
	// Elastic's enrichment, for one, reads only an integer status code.
	case "http.response.status_code", "http.request.body.size", "http.response.body.size",
		"server.port", "client.port", "network.peer.port", "network.local.port",
		"rpc.grpc.status_code", "messaging.batch.message_count", "thread.id", "code.line.number":
		return renameTyped(k, typeInt)
	case "tracestate":
		return tagRule{action: tagTraceState}

	// What the resource (env, version, language, runtime-id, process_id), the instrumentation
	// scope (component), the span kind, or the status and exception event carry, and sampling
	// bookkeeping.
	case "_sampling_priority_v1", "_sample_rate", "_top_level",
		"service", "env", "version", "language", "runtime-id", "process_id", "component", "span.kind",
		"error", "error.message", "error.msg", "error.type", "error.stack", "error.stacktrace", "error.handling_stack":
		return tagRule{action: tagDrop}

	// Unified tags of containers, clouds and orchestrators, named as contrib names them.
	case "container_id", "container_name", "image_name", "image_tag", "runtime",
		"cloud_provider", "region", "zone",
		"task_family", "task_arn", "ecs_cluster_name", "task_version", "ecs_container_name",
		"kube_container_name", "kube_cluster_name", "kube_deployment", "kube_replica_set",
		"kube_stateful_set", "kube_daemon_set", "kube_job", "kube_cronjob", "kube_namespace", "pod_name":
		key, _ := renamedKey(k)
		return rename(key)
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
