// Package estemplates holds the index templates, component templates and lifecycle policies each
// mapping needs on an Elasticsearch that does not ship them (ecs for 8.12-8.15, plain for 7.17 and
// 8.0-8.11), and the retention the otel mapping's built-in templates lack (8.16+), embedded for
// tracegate-es-setup. File names say what each is: ilm-policy.<name>.json,
// component-template.<name>.json, index-template.<name>.json, under <mode>/.
package estemplates

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sync"
)

// Templates holds <mode>/*.json.
//
//go:embed ecs/*.json plain/*.json otel/*.json
var Templates embed.FS

// ecsMappingsFile is the component template that maps tracegate's ECS documents.
const ecsMappingsFile = "ecs/component-template.tracegate-traces-ecs@mappings.json"

// ECSObjectFields returns the top-level fields the ECS template maps as objects, read from the
// template itself so that a processor and the template cannot drift apart. Parsed once.
var ECSObjectFields = sync.OnceValues(func() (map[string]bool, error) {
	out, err := ObjectFields(Templates, ecsMappingsFile)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no object fields", ecsMappingsFile)
	}
	return out, err
})

// ObjectFields reads a component template's top-level properties that are objects (have
// properties of their own).
func ObjectFields(fsys fs.FS, name string) (map[string]bool, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Template struct {
			Mappings struct {
				Properties map[string]struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"properties"`
			} `json:"mappings"`
		} `json:"template"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	out := map[string]bool{}
	for field, m := range doc.Template.Mappings.Properties {
		if len(m.Properties) > 0 {
			out[field] = true
		}
	}
	return out, nil
}
