package metrics

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/capstan-io/capstan/request"
)

// Labels are the request families' labels of one request, as kube
// reports them.
type Labels struct {
	Verb, DryRun, Group, Version, Resource, Subresource, Scope, Component string
}

// connectSubresources are reported with the verb CONNECT, as kube does.
var connectSubresources = map[string]bool{"log": true, "exec": true, "portforward": true, "attach": true, "proxy": true}

// resourceVerbs are kube's reported verbs of capstan's resource verbs.
var resourceVerbs = map[string]string{
	"get": "GET", "list": "LIST", "watch": "WATCH", "create": "POST", "update": "PUT",
	"patch": "PATCH", "delete": "DELETE", "deletecollection": "DELETE",
}

// methodVerbs are the HTTP methods kube reports as themselves; any other
// is "other", so that made-up methods add no series.
var methodVerbs = map[string]string{
	http.MethodGet: "GET", http.MethodHead: "GET", http.MethodPost: "POST", http.MethodPut: "PUT",
	http.MethodPatch: "PATCH", http.MethodDelete: "DELETE", "CONNECT": "CONNECT",
}

const applyPatchType = "application/apply-patch+yaml"

// ResourceLabels are the labels of a resource request that a handler
// serves: verb, dry run, group, version, resource, subresource and scope.
func ResourceLabels(r *http.Request, info *request.Info) Labels {
	l := Labels{
		DryRun: dryRunLabel(r.URL), Group: info.APIGroup, Version: info.APIVersion,
		Resource: info.Resource, Subresource: info.Subresource, Scope: scopeLabel(info),
		Component: "apiserver",
	}
	l.Verb = resourceVerb(r.Method, r.Header.Get("Content-Type"), info)
	return l
}

// resourceVerb is kube's reported verb: the HTTP method, LIST and WATCH
// for collections, APPLY for server-side apply, CONNECT for the streaming
// subresources, "other" for anything else.
func resourceVerb(method, contentType string, info *request.Info) string {
	if connectSubresources[info.Subresource] {
		return "CONNECT"
	}
	v, ok := resourceVerbs[info.Verb]
	if !ok {
		return methodVerb(method)
	}
	if v == "PATCH" && contentType == applyPatchType {
		return "APPLY"
	}
	return v
}

func methodVerb(method string) string {
	if v, ok := methodVerbs[method]; ok {
		return v
	}
	return "other"
}

// scopeLabel is kube's scope: resource for a named object (and creates),
// namespace, cluster, or empty for non-resource requests.
func scopeLabel(info *request.Info) string {
	switch {
	case info.Name != "" || info.Verb == "create":
		return "resource"
	case info.Namespace != "":
		return "namespace"
	case info.IsResourceRequest:
		return "cluster"
	}
	return ""
}

// dryRunLabel is "All", "" or "invalid": the values kube reports.
func dryRunLabel(u *url.URL) string {
	if !strings.Contains(u.RawQuery, "dryRun") {
		return ""
	}
	values := u.Query()["dryRun"]
	for _, v := range values {
		if v != "All" {
			return "invalid"
		}
	}
	if len(values) == 0 {
		return ""
	}
	return "All"
}

// fieldValidationLabel is the fieldValidation parameter when it is one of
// kube's values, else "invalid".
func fieldValidationLabel(u *url.URL) string {
	if !strings.Contains(u.RawQuery, "fieldValidation") {
		return ""
	}
	values := u.Query()["fieldValidation"]
	if len(values) != 1 {
		return "invalid"
	}
	switch values[0] {
	case "Ignore", "Warn", "Strict":
		return values[0]
	}
	return "invalid"
}
