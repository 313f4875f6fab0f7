// Package request holds what the server knows about a request as it travels
// down the handler chain: the parsed RequestInfo and the namespace, carried
// in the request's context.
package request

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Info is the API meaning of a request path and method.
type Info struct {
	// IsResourceRequest is false for /healthz, /version, discovery and other
	// non-resource paths.
	IsResourceRequest bool
	Path              string
	// Verb is a Kubernetes verb (get, list, watch, create, update, patch,
	// delete, deletecollection, proxy) for resource requests, empty for a
	// method that has none (OPTIONS), and the lower-case HTTP method for
	// non-resource requests.
	Verb        string
	APIPrefix   string // "api" or "apis"
	APIGroup    string // "" for the core group
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	// Name is the object's name from the path or, for a list or watch, from
	// a metadata.name field selector (see PathName).
	Name string
	// FieldSelector and LabelSelector are the raw selectors of a list,
	// watch or deletecollection: kube's authorizers may allow a collection
	// narrowed by them (a node's own pods) and not the whole one.
	FieldSelector string
	LabelSelector string
	// Parts are the path segments after the version, for subresource paths
	// such as pods/x/proxy/... that carry more.
	Parts []string
}

// Parser turns paths into Infos. The zero value is not usable; use NewParser.
type Parser struct {
	apiPrefixes       sets.Set[string] // "api", "apis"
	grouplessPrefixes sets.Set[string] // "api"
}

// NewParser returns a Parser for kube's layout: /api/v1/... for the core
// group and /apis/<group>/<version>/... for the others.
func NewParser() *Parser {
	return &Parser{
		apiPrefixes:       sets.New("api", "apis"),
		grouplessPrefixes: sets.New("api"),
	}
}

var (
	namespaceSubresources = sets.New("status", "finalize")
	// pathVerbs are the verbs a path may name before the resource: the
	// legacy /watch/... paths and the long-gone /proxy/... ones, which kube
	// still parses (and authorizes) before answering 404.
	pathVerbs         = sets.New("watch", "proxy")
	verbsWithSelector = sets.New("list", "watch", "deletecollection")
)

// Parse returns the Info of r. A path it does not understand is a
// non-resource request; the error is for a resource path that names a
// path verb and nothing after it (/api/v1/watch), which kube answers 500.
//
// Resource paths:
//
//	/apis/{group}/{version}/namespaces/{ns}/{resource}/{name}/{subresource}
//	/apis/{group}/{version}/{resource}/{name}/{subresource}
//	/api/{version}/...                          (core group)
//	/apis/{group}/{version}/watch/...           (legacy watch paths)
func (p *Parser) Parse(r *http.Request) (*Info, error) {
	info := &Info{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) < 3 || !p.apiPrefixes.Has(parts[0]) {
		return info, nil
	}
	info.APIPrefix = parts[0]
	parts = parts[1:]
	if !p.grouplessPrefixes.Has(info.APIPrefix) {
		if len(parts) < 3 { // /apis/group/version is discovery
			return info, nil
		}
		info.APIGroup, parts = parts[0], parts[1:]
	}
	info.APIVersion, parts = parts[0], parts[1:]
	info.IsResourceRequest = true

	verbInPath := pathVerbs.Has(parts[0])
	if verbInPath {
		if len(parts) < 2 {
			return info, fmt.Errorf("unable to determine kind and namespace from url, %v", r.URL)
		}
		info.Verb, parts = parts[0], parts[1:]
	} else {
		info.Verb = verbOf(r.Method)
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		info.Namespace = parts[1]
		// /namespaces/{ns} and /namespaces/{ns}/status|finalize are the
		// namespace itself, not a collection in it.
		if len(parts) > 2 && !namespaceSubresources.Has(parts[2]) {
			parts = parts[2:]
		}
	}
	info.Parts = parts
	switch {
	case len(parts) >= 3 && info.Verb != "proxy": // a proxy path's rest is not a subresource
		info.Subresource = parts[2]
		fallthrough
	case len(parts) >= 2:
		info.Name = parts[1]
		fallthrough
	default:
		info.Resource = parts[0]
	}
	collectionVerb(r, info)
	if !verbInPath && verbsWithSelector.Has(info.Verb) {
		q := r.URL.Query()
		info.FieldSelector, info.LabelSelector = q.Get("fieldSelector"), q.Get("labelSelector")
	}
	return info, nil
}

// PathName is the object name the path itself carries; Name may also come
// from a list's metadata.name field selector.
func (i *Info) PathName() string {
	if !i.IsResourceRequest || len(i.Parts) < 2 {
		return ""
	}
	return i.Parts[1]
}

// collectionVerb turns get into list or watch, and delete into
// deletecollection, for requests without a name. A list or watch narrowed
// to one name by a metadata.name field selector is named, as RBAC's
// resourceNames rules need; the options are read as kube's list handler
// reads them, and options it cannot read leave only the watch flag.
func collectionVerb(r *http.Request, info *Info) {
	if info.Name == "" && info.Verb == "get" {
		q := r.URL.Query()
		var opts metainternalversion.ListOptions
		if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, &opts); err != nil {
			opts = metainternalversion.ListOptions{}
			if v, ok := q["watch"]; ok && len(v) > 0 {
				opts.Watch = v[0] != "0" && !strings.EqualFold(v[0], "false")
			}
		}
		info.Verb = "list"
		if opts.Watch {
			info.Verb = "watch"
		}
		if opts.FieldSelector != nil {
			if name, ok := opts.FieldSelector.RequiresExactMatch("metadata.name"); ok && len(content.IsPathSegmentName(name)) == 0 {
				info.Name = name
			}
		}
	}
	if info.Verb == "delete" && info.Name == "" {
		info.Verb = "deletecollection"
	}
}

// verbOf is kube's verb of a method on a resource path; other methods
// have none.
func verbOf(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

func splitPath(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

type contextKey int

const (
	infoKey contextKey = iota
	namespaceKey
)

// WithInfo returns a context carrying info.
func WithInfo(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, infoKey, info)
}

// InfoFrom returns the Info carried by ctx.
func InfoFrom(ctx context.Context) (*Info, bool) {
	info, ok := ctx.Value(infoKey).(*Info)
	return info, ok
}

// WithNamespace returns a context carrying the request's namespace.
func WithNamespace(ctx context.Context, ns string) context.Context {
	return context.WithValue(ctx, namespaceKey, ns)
}

// NamespaceFrom returns the namespace carried by ctx ("" for cluster scope).
func NamespaceFrom(ctx context.Context) string {
	ns, _ := ctx.Value(namespaceKey).(string)
	return ns
}
