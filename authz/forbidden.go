package authz

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/request"
)

// htmlEscaper keeps a user-chosen name or path from being read as markup
// by a client that renders the message, as kube escapes it.
var htmlEscaper = strings.NewReplacer(`&`, "&amp;", `<`, "&lt;", `>`, "&gt;")

// Forbidden is kube's 403 for a request the authorizer did not allow, with
// its message and details:
//
//	pods "p" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "ns": <reason>
//	forbidden: User "alice" cannot get path "/logs"
func Forbidden(a Attributes, reason string) *apierrors.StatusError {
	info := a.Info
	if info == nil {
		info = &request.Info{}
	}
	msg := htmlEscaper.Replace(forbiddenMessage(a.User, info))
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
	return apierrors.NewForbidden(gr, info.Name, errors.New(msg))
}

func forbiddenMessage(u *authn.User, info *request.Info) string {
	name := ""
	if u != nil {
		name = u.Name
	}
	if !info.IsResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", name, info.Verb, info.Path)
	}
	resource := info.Resource
	if info.Subresource != "" {
		resource += "/" + info.Subresource
	}
	if info.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, info.Verb, resource, info.APIGroup, info.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, info.Verb, resource, info.APIGroup)
}
