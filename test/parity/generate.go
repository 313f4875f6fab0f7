package parity

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
)

// GenerateFromDiscovery reads kube's recorded aggregated discovery (api.json
// and apis.json in dir) and makes one sequence per group version: the error
// paths every resource has, asked of each of its verbs and subresources.
// The discovery is the recorded one, not the server's, so that both servers
// meet the same requests.
func GenerateFromDiscovery(dir string) ([]Sequence, error) {
	var out []Sequence
	for _, f := range []string{"api.json", "apis.json"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		var list apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, g := range list.Items {
			for _, v := range g.Versions {
				out = append(out, groupVersionSequence(g.Name, v))
			}
		}
	}
	return out, nil
}

func groupVersionSequence(group string, v apidiscoveryv2.APIVersionDiscovery) Sequence {
	prefix := "/apis/" + group + "/" + v.Version
	name := "gen-" + group + "-" + v.Version
	if group == "" {
		prefix, name = "/api/"+v.Version, "gen-core-"+v.Version
	}
	s := Sequence{Name: name}
	for _, r := range v.Resources {
		base := prefix + "/" + r.Resource
		if r.Scope == apidiscoveryv2.ScopeNamespace {
			base = prefix + "/namespaces/{ns}/" + r.Resource
		}
		s.Steps = append(s.Steps, resourceSteps(r, base)...)
	}
	return s
}

const (
	missing   = "parity-missing"
	tableType = "application/json;as=Table;v=v1;g=meta.k8s.io"
	pomType   = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
	protoType = "application/vnd.kubernetes.protobuf"
)

// resourceSteps are the requests asked of one resource: reads of a missing
// object and its subresources, collections in every format, continue
// tokens that do not decode, and writes whose body or target is wrong.
func resourceSteps(r apidiscoveryv2.APIResourceDiscovery, base string) []Step {
	id := func(s string) string { return r.Resource + "/" + s }
	has := func(verb string) bool { return slices.Contains(r.Verbs, verb) }
	item := base + "/" + missing
	var steps []Step
	if has("list") {
		steps = append(steps,
			Step{ID: id("list"), Req: "GET " + base, Compare: "shape"},
			Step{ID: id("list-table"), Req: "GET " + base, Headers: map[string]string{"Accept": tableType}, Compare: "shape"},
			Step{ID: id("list-metadata"), Req: "GET " + base, Headers: map[string]string{"Accept": pomType}, Compare: "shape"},
			Step{ID: id("list-protobuf"), Req: "GET " + base + "?limit=1", Headers: map[string]string{"Accept": protoType}, Compare: "shape"},
			Step{ID: id("list-garbled-continue"), Req: "GET " + base + "?limit=1&continue=garbled"},
		)
	}
	if has("get") {
		steps = append(steps, Step{ID: id("get-missing"), Req: "GET " + item})
	}
	for _, sub := range r.Subresources {
		if slices.Contains(sub.Verbs, "get") {
			steps = append(steps, Step{ID: id(sub.Subresource + "-get-missing"), Req: "GET " + item + "/" + sub.Subresource})
		}
	}
	if has("delete") {
		steps = append(steps, Step{ID: id("delete-missing"), Req: "DELETE " + item})
	}
	if has("update") {
		steps = append(steps, Step{ID: id("update-garbled"), Req: "PUT " + item, Headers: jsonBody, Body: "{"})
	}
	if has("patch") {
		steps = append(steps, patchSteps(id, item)...)
	}
	if has("create") {
		steps = append(steps,
			Step{ID: id("create-garbled"), Req: "POST " + base, Headers: jsonBody, Body: "{"},
			Step{ID: id("create-empty"), Req: "POST " + base, Headers: jsonBody, Body: "{}"},
			Step{ID: id("create-wrong-kind"), Req: "POST " + base, Headers: jsonBody, Body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"x"}}`},
		)
	}
	return steps
}

var jsonBody = map[string]string{"Content-Type": "application/json"}

// patchSteps are patches of a missing object in every patch type, and an
// apply whose body names no kind.
func patchSteps(id func(string) string, item string) []Step {
	ct := func(t string) map[string]string { return map[string]string{"Content-Type": t} }
	return []Step{
		{ID: id("patch-merge-missing"), Req: "PATCH " + item, Headers: ct("application/merge-patch+json"), Body: `{"metadata":{"labels":{"a":"b"}}}`},
		{ID: id("patch-json-missing"), Req: "PATCH " + item, Headers: ct("application/json-patch+json"), Body: `[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`},
		{ID: id("patch-strategic-missing"), Req: "PATCH " + item, Headers: ct("application/strategic-merge-patch+json"), Body: `{"metadata":{"labels":{"a":"b"}}}`},
		{ID: id("apply-no-kind"), Req: "PATCH " + item + "?fieldManager=parity", Headers: ct("application/apply-patch+yaml"), Body: `{"metadata":{"name":"` + missing + `"}}`},
		{ID: id("patch-unknown-type"), Req: "PATCH " + item, Headers: ct("text/plain"), Body: `{}`},
	}
}

// stepKey names a step in reports and in the explained differences.
func stepKey(seq, step string) string { return strings.Join([]string{seq, step}, ":") }
