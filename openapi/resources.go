package openapi

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kube-openapi/pkg/common"

	"github.com/capstan-io/capstan/endpoints/discovery"
)

// resource is what the routes of one resource or subresource are made of.
type resource struct {
	gv            schema.GroupVersion
	name, sub     string // configmaps, or namespaces and status
	kind          string // the kind the paths read and write
	idKind        string // the parent's kind, in operation ids
	gvk           metav1.GroupVersionKind
	namespaced    bool
	object, list  model
	verbs         []string
	root          string // /api/v1 or /apis/<group>/<version>
	operationTags []string
	media         *routeBuilder // the media types of the server
	// custom marks the resources of CRDs, whose operations kube documents
	// differently: see customRoute.
	custom bool
}

// newResource resolves the models of r, one of the resources of v; custom
// says v is a version of custom resources. It fails if the catalog has no
// definition of r's kind.
func (b *routeBuilder) newResource(gv schema.GroupVersion, v discovery.Version, r metav1.APIResource, custom bool) (*resource, error) {
	name, sub, _ := strings.Cut(r.Name, "/")
	gvk := gv.WithKind(r.Kind)
	if r.Group != "" || r.Version != "" {
		gvk.Group, gvk.Version = r.Group, r.Version
	}
	res := &resource{
		gv: gv, name: name, sub: sub, kind: r.Kind, idKind: r.Kind,
		gvk:        metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		namespaced: r.Namespaced, verbs: r.Verbs, root: rootPath(gv), media: b,
		operationTags: []string{gvTag(gv.Group, gv.Version)}, custom: custom,
	}
	if sub != "" {
		for _, parent := range v.Resources {
			if parent.Name == name {
				res.idKind = parent.Kind
			}
		}
	}
	if custom {
		// Every operation of a custom resource, scale's too, is marked
		// with the resource's kind.
		res.gvk = metav1.GroupVersionKind{Group: gv.Group, Version: gv.Version, Kind: res.idKind}
	}
	var err error
	if res.object, err = b.model(gvk); err != nil {
		return nil, err
	}
	if sub == "" && slices.Contains(r.Verbs, "list") {
		if res.list, err = b.model(gv.WithKind(r.Kind + "List")); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// model is the definition of a kind, if the catalog has one.
func (b *routeBuilder) model(gvk schema.GroupVersionKind) (model, error) {
	name, err := b.catalog.Name(gvk)
	if err != nil {
		return "", err
	}
	if !hasDefinition(b.catalog, name) {
		return "", fmt.Errorf("no OpenAPI definition %s of %v", name, gvk)
	}
	return model(name), nil
}

// routes are the operations on the resource, at the paths kube serves
// them: the collection, one named object, the legacy watch paths and, for
// namespaced resources, the lists across all namespaces.
func (r *resource) routes() []common.Route {
	collection, item := "/"+r.name, "/"+r.name+"/{name}"
	var collectionParams []common.Parameter
	if r.namespaced {
		collection, item = "/namespaces/{namespace}"+collection, "/namespaces/{namespace}"+item
		collectionParams = []common.Parameter{namespaceParam}
	}
	itemParams := append(slices.Clip(collectionParams), nameParam(r.kind))
	if r.sub != "" {
		item += "/" + r.sub
		collection, collectionParams = item, itemParams
	}
	can := func(verb string) bool { return slices.Contains(r.verbs, verb) && (verb != "list" || r.list != "") }
	var out []common.Route
	add := func(action, path string, params []common.Parameter, ok bool) {
		if ok {
			out = append(out, r.route(operations[action], path, params, false))
		}
	}
	add("list", collection, collectionParams, can("list"))
	add("post", collection, collectionParams, can("create"))
	add("deletecollection", collection, collectionParams, can("deletecollection"))
	// kube documents no watch paths of custom resources: they are
	// watched with the list's watch parameter.
	watchPaths := !r.custom
	add("watchlist", "/watch"+collection, collectionParams, watchPaths && can("watch") && can("list"))
	add("get", item, itemParams, can("get"))
	add("put", item, itemParams, can("update"))
	add("patch", item, itemParams, can("patch"))
	add("delete", item, itemParams, can("delete"))
	add("watch", "/watch"+item, itemParams, watchPaths && can("watch"))
	if r.namespaced && r.sub == "" {
		if can("list") {
			out = append(out, r.route(operations["list"], "/"+r.name, nil, true))
		}
		if watchPaths && can("watch") && can("list") {
			out = append(out, r.route(operations["watchlist"], "/watch/"+r.name, nil, true))
		}
	}
	return out
}

// route is one operation at one path; allNamespaces marks the lists of a
// namespaced resource across all namespaces.
func (r *resource) route(op operation, path string, pathParams []common.Parameter, allNamespaces bool) *route {
	scope := ""
	if r.namespaced && !allNamespaces {
		scope = "Namespaced"
	}
	id := op.idVerb + gvID(r.gv.Group, r.gv.Version) + op.idInfix + scope + r.idKind + title(r.sub) + op.idSuffix
	if allNamespaces {
		id += "ForAllNamespaces"
	}
	rt := &route{
		method: op.method, path: r.root + path, operationID: id, tags: r.operationTags,
		description: op.describe(r.idKind, r.sub),
		consumes:    []string{"*/*"}, produces: r.media.mediaTypes,
		metadata:  map[string]any{"x-kubernetes-action": op.action, extensionGVK: r.gvk},
		responses: op.responses(r),
	}
	if op.stream {
		rt.produces = r.media.allTypes
	}
	if op.action == "patch" {
		rt.consumes = r.media.patchTypes
	}
	rt.params = append(rt.params, prettyParam)
	rt.params = append(rt.params, op.query...)
	if op.body != nil {
		m, required := op.body(r)
		rt.params = append(rt.params, bodyParam(m, required))
		rt.body = m
	}
	rt.params = append(rt.params, pathParams...)
	if r.custom {
		customRoute(rt, op)
	}
	return rt
}

// The media types kube documents for the operations of custom resources.
var (
	customTypes      = []string{runtime.ContentTypeJSON, runtime.ContentTypeYAML}
	customPatchTypes = []string{string(types.JSONPatchType), string(types.MergePatchType), string(types.ApplyYAMLPatchType)}
)

// customRoute documents an operation on custom resources as kube does:
// JSON and YAML only, patches without strategic merge (which clients such
// as kubectl apply read from the document to choose their patch type), and
// a patch answers 200 only.
func customRoute(rt *route, op operation) {
	rt.consumes, rt.produces = customTypes, customTypes
	if op.action == "patch" {
		rt.consumes = customPatchTypes
		rt.responses = rt.responses[:1] // 200 comes first
	}
}

// about describes an operation with format, or subFormat (the kind, then
// the subresource) for subresources.
func about(format, subFormat string) func(kind, sub string) string {
	return func(kind, sub string) string {
		if sub != "" {
			return fmt.Sprintf(subFormat, kind, sub)
		}
		return fmt.Sprintf(format, kind)
	}
}

// rootPath is where a group version is served.
func rootPath(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "/api/" + gv.Version
	}
	return "/apis/" + gv.Group + "/" + gv.Version
}
