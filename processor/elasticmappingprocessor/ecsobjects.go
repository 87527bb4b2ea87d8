package elasticmappingprocessor // import "github.com/tracegate/tracegate/processor/elasticmappingprocessor"

import (
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/tracegate/tracegate/configs/elasticsearch"
)

// ecsMappingsFile is the component template that maps tracegate's ECS documents.
const ecsMappingsFile = "ecs/component-template.tracegate-traces-ecs@mappings.json"

// ecsObjectFields are the top-level fields that template maps as objects, read from the template
// itself so that the two cannot drift apart.
var ecsObjectFields = mustObjectFields(elasticsearch.Templates, ecsMappingsFile)

// objectFields reads a component template's top-level properties that are objects (have
// properties of their own).
func objectFields(fsys fs.FS, name string) (map[string]bool, error) {
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

// mustObjectFields panics on an embedded template that does not parse: a build defect, caught by
// every test of this package.
func mustObjectFields(fsys fs.FS, name string) map[string]bool {
	out, err := objectFields(fsys, name)
	if err != nil || len(out) == 0 {
		panic(fmt.Sprintf("elasticmapping: the ECS template's object fields: %v (%d found)", err, len(out)))
	}
	return out
}
