// Package request holds what the server knows about a request as it travels
// down the handler chain: the parsed RequestInfo and the namespace, carried
// in the request's context.
package request

import (
	"context"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
)

// Info is the API meaning of a request path and method.
type Info struct {
	// IsResourceRequest is false for /healthz, /version, discovery and other
	// non-resource paths.
	IsResourceRequest bool
	Path              string
	// Verb is a Kubernetes verb (get, list, watch, create, update, patch,
	// delete, deletecollection) for resource requests and the lower-case
	// HTTP method otherwise.
	Verb        string
	APIPrefix   string // "api" or "apis"
	APIGroup    string // "" for the core group
	APIVersion  string
	Namespace   string
	Resource    string
	Subresource string
	Name        string
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

var namespaceSubresources = sets.New("status", "finalize")

// Parse returns the Info of r. It never fails: a path it does not understand
// is a non-resource request.
//
// Resource paths:
//
//	/apis/{group}/{version}/namespaces/{ns}/{resource}/{name}/{subresource}
//	/apis/{group}/{version}/{resource}/{name}/{subresource}
//	/api/{version}/...                          (core group)
//	/apis/{group}/{version}/watch/...           (legacy watch paths)
func (p *Parser) Parse(r *http.Request) *Info {
	info := &Info{Path: r.URL.Path, Verb: strings.ToLower(r.Method)}
	parts := splitPath(r.URL.Path)
	if len(parts) < 3 || !p.apiPrefixes.Has(parts[0]) {
		return info
	}
	info.APIPrefix = parts[0]
	parts = parts[1:]
	if !p.grouplessPrefixes.Has(info.APIPrefix) {
		if len(parts) < 3 { // /apis/group/version is discovery
			return info
		}
		info.APIGroup, parts = parts[0], parts[1:]
	}
	info.APIVersion, parts = parts[0], parts[1:]
	info.IsResourceRequest = true

	if parts[0] == "watch" {
		info.Verb = "watch"
		parts = parts[1:]
	} else {
		info.Verb = verbOf(r.Method)
	}
	if len(parts) == 0 {
		info.IsResourceRequest = false
		return info
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
	case len(parts) >= 3:
		info.Subresource = parts[2]
		fallthrough
	case len(parts) == 2:
		info.Name = parts[1]
		fallthrough
	default:
		info.Resource = parts[0]
	}
	p.collectionVerb(r, info)
	return info
}

// collectionVerb turns get into list or watch, and delete into
// deletecollection, for requests without a name.
func (p *Parser) collectionVerb(r *http.Request, info *Info) {
	if info.Name == "" && info.Verb == "get" {
		info.Verb = "list"
	}
	if info.Verb == "list" || info.Verb == "get" {
		if isWatchQuery(r.URL.Query().Get("watch")) {
			info.Verb = "watch"
		}
	}
	if info.Verb == "delete" && info.Name == "" {
		info.Verb = "deletecollection"
	}
	switch info.Verb {
	case "list", "watch", "deletecollection":
		q := r.URL.Query()
		info.FieldSelector, info.LabelSelector = q.Get("fieldSelector"), q.Get("labelSelector")
	}
}

func isWatchQuery(v string) bool {
	return v == "1" || strings.EqualFold(v, "true")
}

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
	return strings.ToLower(method)
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
