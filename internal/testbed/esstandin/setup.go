package esstandin

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
)

// The setup API: index templates, component templates and lifecycle (ILM) policies, as
// Elasticsearch 7.8+ serves them. The stand-in stores what it is given, records every request, and
// an index template with a data_stream section turns matching names into data streams for bulk
// writes — so documents for a data stream no installed template matches fail, as on a real
// cluster with require_data_stream=true.

// SetupRequest is one recorded request of the setup API.
type SetupRequest struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
}

// setupKinds are the resources of the setup API: URL segment → the key of its GET response.
var setupKinds = map[string]string{
	"_index_template":     "index_templates",
	"_component_template": "component_templates",
	"_ilm/policy":         "", // GET /_ilm/policy/<name> answers {"<name>": {...}}
	"_ingest/pipeline":    "", // GET /_ingest/pipeline/<name> answers {"<name>": <pipeline>}
}

type setupStore struct {
	mu        sync.Mutex
	resources map[string]map[string]json.RawMessage // kind → name → body as PUT
	requests  []SetupRequest
}

func newSetupStore() *setupStore {
	return &setupStore{resources: map[string]map[string]json.RawMessage{}}
}

func (s *setupStore) record(r *http.Request, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, SetupRequest{Method: r.Method, Path: r.URL.Path, Status: status})
}

// SetupRequests returns the setup API requests received, in order.
func (s *Server) SetupRequests() []SetupRequest {
	s.setup.mu.Lock()
	defer s.setup.mu.Unlock()
	return append([]SetupRequest(nil), s.setup.requests...)
}

// SetupResource returns the body stored for a setup resource ("_index_template",
// "_component_template" or "_ilm/policy") and name.
func (s *Server) SetupResource(kind, name string) (json.RawMessage, bool) {
	s.setup.mu.Lock()
	defer s.setup.mu.Unlock()
	b, ok := s.setup.resources[kind][name]
	return b, ok
}

// splitSetupPath recognizes /_index_template[/name], /_component_template[/name],
// /_ilm/policy[/name] and /_ingest/pipeline[/name].
func splitSetupPath(p string) (kind, name string, ok bool) {
	for k := range setupKinds {
		if p == k {
			return k, "", true
		}
		if rest, found := strings.CutPrefix(p, k+"/"); found && rest != "" && !strings.Contains(rest, "/") {
			return k, rest, true
		}
	}
	return "", "", false
}

func (s *Server) handleSetup(w http.ResponseWriter, r *http.Request, kind, name string) {
	status := s.serveSetup(w, r, kind, name)
	s.setup.record(r, status)
}

func (s *Server) serveSetup(w http.ResponseWriter, r *http.Request, kind, name string) int {
	fail := func(status int, typ, reason string) int {
		writeJSON(w, status, (&requestError{status, typ, reason}).body())
		return status
	}
	switch r.Method {
	case http.MethodGet:
		return s.getSetup(w, kind, name)
	case http.MethodPut, http.MethodPost:
		if name == "" {
			return fail(http.StatusMethodNotAllowed, "illegal_argument_exception", "a name is required")
		}
		body, rerr := readBody(r, 1<<20, new(bytes.Buffer))
		if rerr != nil {
			return fail(rerr.status, rerr.kind, rerr.reason)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(body, &doc); err != nil {
			return fail(http.StatusBadRequest, "x_content_parse_exception", "request body is not a JSON object: "+err.Error())
		}
		if kind == "_index_template" {
			t, err := parseIndexTemplate(name, doc)
			if err != nil {
				return fail(http.StatusBadRequest, "action_request_validation_exception", err.Error())
			}
			s.catalog.putTemplate(t)
		}
		if kind == "_ilm/policy" {
			if _, ok := doc["policy"]; !ok {
				return fail(http.StatusBadRequest, "x_content_parse_exception", "[put_lifecycle_request] policy is required")
			}
		}
		s.setup.mu.Lock()
		if s.setup.resources[kind] == nil {
			s.setup.resources[kind] = map[string]json.RawMessage{}
		}
		s.setup.resources[kind][name] = body
		s.setup.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"acknowledged": true})
		return http.StatusOK
	case http.MethodDelete:
		s.setup.mu.Lock()
		_, ok := s.setup.resources[kind][name]
		delete(s.setup.resources[kind], name)
		s.setup.mu.Unlock()
		if !ok {
			return fail(http.StatusNotFound, "resource_not_found_exception", kind+" ["+name+"] missing")
		}
		if kind == "_index_template" {
			s.catalog.deleteTemplate(name)
		}
		writeJSON(w, http.StatusOK, map[string]any{"acknowledged": true})
		return http.StatusOK
	}
	return fail(http.StatusMethodNotAllowed, "illegal_argument_exception", "method "+r.Method+" not allowed")
}

func (s *Server) getSetup(w http.ResponseWriter, kind, name string) int {
	s.setup.mu.Lock()
	stored := map[string]json.RawMessage{}
	for n, b := range s.setup.resources[kind] {
		if nameMatches(name, n) {
			stored[n] = b
		}
	}
	s.setup.mu.Unlock()
	if kind == "_index_template" {
		// Built-in templates exist without a PUT.
		for _, t := range s.catalog.templateList() {
			if _, ok := stored[t.Name]; !ok && nameMatches(name, t.Name) {
				stored[t.Name] = t.body()
			}
		}
	}
	if name != "" && len(stored) == 0 {
		writeJSON(w, http.StatusNotFound, (&requestError{
			http.StatusNotFound, "resource_not_found_exception",
			kind + " matching [" + name + "] not found",
		}).body())
		return http.StatusNotFound
	}
	names := make([]string, 0, len(stored))
	for n := range stored {
		names = append(names, n)
	}
	sort.Strings(names)
	listKey := setupKinds[kind]
	if kind == "_ingest/pipeline" {
		out := map[string]json.RawMessage{}
		for _, n := range names {
			out[n] = stored[n]
		}
		writeJSON(w, http.StatusOK, out)
		return http.StatusOK
	}
	if listKey == "" { // ILM: {"<name>": {"version": 1, "policy": {...}}}
		out := map[string]any{}
		for _, n := range names {
			var doc map[string]json.RawMessage
			_ = json.Unmarshal(stored[n], &doc)
			out[n] = map[string]any{"version": 1, "policy": doc["policy"]}
		}
		writeJSON(w, http.StatusOK, out)
		return http.StatusOK
	}
	singular := strings.TrimSuffix(listKey, "s")
	list := make([]any, 0, len(names))
	for _, n := range names {
		list = append(list, map[string]any{"name": n, singular: stored[n]})
	}
	writeJSON(w, http.StatusOK, map[string]any{listKey: list})
	return http.StatusOK
}

// nameMatches applies a GET's name, which may hold * wildcards, as Elasticsearch does; an empty
// name matches every resource.
func nameMatches(pattern, name string) bool {
	if pattern == "" || pattern == name {
		return true
	}
	ok, _ := path.Match(pattern, name)
	return ok && strings.Contains(pattern, "*")
}

// validationFailed is the reason Elasticsearch gives for a request that fails validation, worded
// as Elasticsearch words it ("Validation Failed: 1: <problem>;").
func validationFailed(problem string) error {
	return errors.New("Validation Failed: 1: " + problem + ";")
}

// parseIndexTemplate reads what the stand-in acts on from a composable index template.
func parseIndexTemplate(name string, doc map[string]json.RawMessage) (IndexTemplate, error) {
	t := IndexTemplate{Name: name}
	raw, ok := doc["index_patterns"]
	if !ok {
		return t, validationFailed("index patterns are missing")
	}
	if err := json.Unmarshal(raw, &t.Patterns); err != nil {
		var one string
		if err := json.Unmarshal(raw, &one); err != nil {
			return t, errors.New("index_patterns must be a string or an array of strings")
		}
		t.Patterns = []string{one}
	}
	if p, ok := doc["priority"]; ok {
		if err := json.Unmarshal(p, &t.Priority); err != nil {
			return t, errors.New("priority must be a number")
		}
	}
	if v, ok := doc["version"]; ok {
		if err := json.Unmarshal(v, &t.Version); err != nil {
			return t, errors.New("version must be a number")
		}
	}
	_, t.DataStream = doc["data_stream"]
	return t, nil
}

func isSetupPath(p string) bool {
	_, _, ok := splitSetupPath(p)
	return ok
}
