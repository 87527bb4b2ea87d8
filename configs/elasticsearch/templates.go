// Package elasticsearch holds the index templates, component templates and lifecycle policies
// each mapping needs on an Elasticsearch that does not ship them (ecs for 8.12-8.15, plain for
// 7.17 and 8.0-8.11), and the retention the otel mapping's built-in templates lack (8.16+),
// embedded for tracegate-es-setup. File names say what each is:
// ilm-policy.<name>.json, component-template.<name>.json, index-template.<name>.json.
package elasticsearch

import "embed"

// Templates holds <mode>/*.json.
//
//go:embed ecs/*.json plain/*.json otel/*.json
var Templates embed.FS
