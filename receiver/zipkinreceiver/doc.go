//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package zipkinreceiver takes Zipkin spans (API v1 JSON or Thrift, v2 JSON or protobuf) over HTTP,
// as the contrib zipkin receiver does, with Zipkin v2 JSON decoded by internal/zipkinjson. See
// README.md.
package zipkinreceiver
