// Package node is kube's Node authorizer: a kubelet, authenticated as
// system:node:<name> in group system:nodes, may read the secrets, config
// maps, volumes and service account tokens of the pods bound to its node,
// write its own Node, lease and pods, and do what the system:node
// ClusterRole lists; on anything else it has no opinion.
package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/authz/rbac"
	"github.com/capstan-io/capstan/request"
)

// The identity of kubelets.
const (
	NodesGroup     = "system:nodes"
	NodeUserPrefix = "system:node:"
	// leaseNamespace holds the nodes' heartbeat leases.
	leaseNamespace = "kube-node-lease"
)

// Identity is the node a user is a kubelet of: its name after
// "system:node:", when it is in system:nodes. isNode with an empty name is
// a kubelet of an unknown node.
func Identity(u *authn.User) (name string, isNode bool) {
	if u == nil {
		return "", false
	}
	name, ok := strings.CutPrefix(u.Name, NodeUserPrefix)
	if !ok || !slices.Contains(u.Groups, NodesGroup) {
		return "", false
	}
	return name, true
}

// Authorizer is --authorization-mode=Node.
type Authorizer struct {
	graph atomic.Pointer[Graph]
	rules []rbacv1.PolicyRule
}

var (
	_ authz.Authorizer   = (*Authorizer)(nil)
	_ authz.RuleResolver = (*Authorizer)(nil)
)

// New returns a Node authorizer that allows rules beyond its graph, which
// it has none of until SetGraph: until then kubelets reach no object.
func New(rules []rbacv1.PolicyRule) *Authorizer {
	return &Authorizer{rules: slices.Clone(rules)}
}

// SetGraph makes a read g, once its informers have synced.
func (a *Authorizer) SetGraph(g *Graph) { a.graph.Store(g) }

// RulesFor cannot list what a kubelet may do, as kube's cannot: it depends
// on the objects, not on rules.
func (a *Authorizer) RulesFor(_ context.Context, u *authn.User, _ string) (authz.Rules, error) {
	if _, isNode := Identity(u); isNode {
		return authz.Rules{Incomplete: true}, errors.New("node authorizer does not support user rule resolution")
	}
	return authz.Rules{}, nil
}

// Authorize allows a kubelet's request by kube's rules, with kube's
// reasons; it has no opinion on other users.
func (a *Authorizer) Authorize(_ context.Context, attrs authz.Attributes) (authz.Decision, string, error) {
	node, isNode := Identity(attrs.User)
	if !isNode || attrs.Info == nil {
		return authz.NoOpinion, "", nil
	}
	if node == "" {
		return authz.NoOpinion, fmt.Sprintf("unknown node for user %q", attrs.User.Name), nil
	}
	r := &request_{Info: withSelectedName(attrs.Info), node: node, graph: a.graph.Load()}
	if attrs.Info.IsResourceRequest {
		if decide, ok := byResource[groupResource{attrs.Info.APIGroup, attrs.Info.Resource}]; ok {
			d, reason := decide(r)
			return d, reason, nil
		}
	}
	if rbac.RulesAllow(attrs.Info, a.rules...) {
		return authz.Allow, "", nil
	}
	return authz.NoOpinion, "", nil
}

type groupResource struct{ group, resource string }

// request_ is one kubelet request being decided.
type request_ struct {
	*request.Info
	node  string
	graph *Graph
}

// byResource are the resources the graph or the node's name decide.
var byResource = map[groupResource]func(*request_) (authz.Decision, string){
	{"", "secrets"}:    func(r *request_) (authz.Decision, string) { return r.readNamespaced(kindSecret) },
	{"", "configmaps"}: func(r *request_) (authz.Decision, string) { return r.readNamespaced(kindConfigMap) },
	{"", "persistentvolumeclaims"}: func(r *request_) (authz.Decision, string) {
		if r.Subresource == "status" {
			return r.statusUpdate(kindPVC)
		}
		return r.get(kindPVC)
	},
	{"", "persistentvolumes"}:                         func(r *request_) (authz.Decision, string) { return r.get(kindPV) },
	{"resource.k8s.io", "resourceclaims"}:             func(r *request_) (authz.Decision, string) { return r.get(kindResourceClaim) },
	{"storage.k8s.io", "volumeattachments"}:           func(r *request_) (authz.Decision, string) { return r.get(kindVA) },
	{"", "serviceaccounts"}:                           (*request_).serviceAccount,
	{"coordination.k8s.io", "leases"}:                 (*request_).lease,
	{"storage.k8s.io", "csinodes"}:                    (*request_).csiNode,
	{"resource.k8s.io", "resourceslices"}:             (*request_).resourceSlice,
	{"", "nodes"}:                                     (*request_).nodeObject,
	{"", "pods"}:                                      (*request_).pod,
	{"certificates.k8s.io", "podcertificaterequests"}: (*request_).podCertificateRequest,
}

func (r *request_) noRelationship() (authz.Decision, string) {
	return authz.NoOpinion, fmt.Sprintf("no relationship found between node '%s' and this object", r.node)
}

// reach allows the named object when the graph links it to the node.
func (r *request_) reach(kind string) (authz.Decision, string) {
	if r.Name == "" {
		return authz.NoOpinion, "No Object name found"
	}
	if !r.graph.Reaches(r.node, kind, r.Namespace, r.Name) {
		return r.noRelationship()
	}
	return authz.Allow, ""
}

func (r *request_) get(kind string) (authz.Decision, string) {
	if r.Verb != "get" {
		return authz.NoOpinion, "can only get individual resources of this type"
	}
	if r.Subresource != "" {
		return authz.NoOpinion, "cannot get subresource"
	}
	return r.reach(kind)
}

func (r *request_) statusUpdate(kind string) (authz.Decision, string) {
	if r.Verb != "update" && r.Verb != "patch" {
		return authz.NoOpinion, "can only get/update/patch this type"
	}
	return r.reach(kind)
}

// readNamespaced allows get, list and watch of one named object: a list
// or watch of a whole collection has no name (see withSelectedName).
func (r *request_) readNamespaced(kind string) (authz.Decision, string) {
	switch r.Verb {
	case "get", "list", "watch":
	default:
		return authz.NoOpinion, "can only read resources of this type"
	}
	if r.Subresource != "" {
		return authz.NoOpinion, "cannot read subresource"
	}
	if r.Namespace == "" {
		return authz.NoOpinion, "can only read namespaced object of this type"
	}
	return r.reach(kind)
}

// serviceAccount allows getting, and creating tokens of, the service
// accounts of the node's pods.
func (r *request_) serviceAccount() (authz.Decision, string) {
	if r.Verb == "get" && r.Subresource == "" {
		return r.readNamespaced(kindServiceAccount)
	}
	if r.Verb != "create" || r.Name == "" {
		return authz.NoOpinion, "can only create tokens for individual service accounts"
	}
	if r.Subresource != "token" {
		return authz.NoOpinion, "can only create token subresource of serviceaccount"
	}
	return r.reach(kindServiceAccount)
}

func (r *request_) lease() (authz.Decision, string) {
	switch r.Verb {
	case "get", "create", "update", "patch", "delete":
	default:
		return authz.NoOpinion, "can only get, create, update, patch, or delete a node lease"
	}
	if r.Namespace != leaseNamespace {
		return authz.NoOpinion, fmt.Sprintf("can only access leases in the %q system namespace", leaseNamespace)
	}
	if r.Verb != "create" && r.Name != r.node {
		return authz.NoOpinion, "can only access node lease with the same name as the requesting node"
	}
	return authz.Allow, ""
}

func (r *request_) csiNode() (authz.Decision, string) {
	switch r.Subresource {
	case "":
		switch r.Verb {
		case "get", "create", "update", "patch", "delete":
		default:
			return authz.NoOpinion, "can only get, create, update, patch, or delete a CSINode"
		}
	case "status":
		// kube's CSIVolumeHealth feature, off by default.
		return authz.NoOpinion, "CSINode status access requires CSIVolumeHealth feature"
	default:
		return authz.NoOpinion, "cannot authorize CSINode subresources"
	}
	if r.Verb != "create" && r.Name != r.node {
		return authz.NoOpinion, "can only access CSINode with the same name as the requesting node"
	}
	return authz.Allow, ""
}

func (r *request_) resourceSlice() (authz.Decision, string) {
	if r.Subresource != "" {
		return authz.NoOpinion, "cannot authorize ResourceSlice subresources"
	}
	switch r.Verb {
	case "create":
		return authz.Allow, ""
	case "get", "update", "patch", "delete":
		return r.reach(kindResourceSlice)
	case "watch", "list", "deletecollection":
		if r.selectsNode("spec.nodeName") {
			return authz.Allow, ""
		}
		return authz.NoOpinion, "can only list/watch/deletecollection resourceslices with nodeName field selector"
	}
	return authz.NoOpinion, "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection"
}

// nodeObject allows a kubelet to register and update Nodes, and to read
// its own only.
func (r *request_) nodeObject() (authz.Decision, string) {
	switch r.Subresource {
	case "":
		switch r.Verb {
		case "create", "update", "patch":
			return authz.Allow, ""
		case "get", "list", "watch":
			switch r.Name {
			case r.node:
				return authz.Allow, ""
			case "":
				return authz.NoOpinion, fmt.Sprintf("node '%s' cannot read all nodes, only its own Node object", r.node)
			default:
				return authz.NoOpinion, fmt.Sprintf("node '%s' cannot read '%s', only its own Node object", r.node, r.Name)
			}
		}
	case "status":
		if r.Verb == "update" || r.Verb == "patch" {
			return authz.Allow, ""
		}
	}
	return authz.NoOpinion, ""
}

// pod allows a kubelet its own pods: reading them one by one or through a
// spec.nodeName selector, mirror pods, status and evictions.
func (r *request_) pod() (authz.Decision, string) {
	switch r.Subresource {
	case "":
		switch r.Verb {
		case "get":
			return r.get(kindPod)
		case "list", "watch":
			if r.selectsNode("spec.nodeName") {
				return authz.Allow, ""
			}
			if r.Name != "" {
				return r.reach(kindPod)
			}
			return authz.NoOpinion, "can only list/watch pods with spec.nodeName field selector"
		case "create", "delete":
			return authz.Allow, ""
		}
	case "status":
		if r.Verb == "update" || r.Verb == "patch" {
			return authz.Allow, ""
		}
	case "eviction":
		if r.Verb == "create" {
			return authz.Allow, ""
		}
	}
	return authz.NoOpinion, ""
}

// podCertificateRequest: kube's rules, but for a get, which kube allows
// for the node's own requests through its graph; capstan's graph keeps no
// PodCertificateRequests (docs/compatibility.md), so a node creates its
// requests and watches them by nodeName, but cannot get one by name.
func (r *request_) podCertificateRequest() (authz.Decision, string) {
	if r.Subresource != "" {
		return authz.NoOpinion, "nodes may not access the status subresource of PodCertificateRequests"
	}
	switch r.Verb {
	case "create":
		return authz.Allow, ""
	case "get":
		return r.noRelationship()
	case "list", "watch":
		if r.selectsNode("spec.nodeName") {
			return authz.Allow, ""
		}
		return authz.NoOpinion, "can only list/watch podcertificaterequests with nodeName field selector"
	}
	return authz.NoOpinion, fmt.Sprintf("nodes may not %s podcertificaterequests", r.Verb)
}

// withSelectedName names the object of a list or watch narrowed to one
// name by a metadata.name field selector, as kube's request info does: a
// kubelet watches each secret it mounts that way.
func withSelectedName(info *request.Info) *request.Info {
	if info.Name != "" || (info.Verb != "list" && info.Verb != "watch") || info.FieldSelector == "" {
		return info
	}
	sel, err := fields.ParseSelector(info.FieldSelector)
	if err != nil {
		return info
	}
	name, ok := sel.RequiresExactMatch("metadata.name")
	if !ok || len(path.IsValidPathSegmentName(name)) > 0 {
		return info
	}
	named := *info
	named.Name = name
	return &named
}

// selectsNode reports whether the request's field selector requires field
// to equal the node's name.
func (r *request_) selectsNode(field string) bool {
	if r.FieldSelector == "" {
		return false
	}
	sel, err := fields.ParseSelector(r.FieldSelector)
	if err != nil {
		return false
	}
	for _, req := range sel.Requirements() {
		if req.Field == field && req.Operator == selection.Equals && req.Value == r.node {
			return true
		}
	}
	return false
}
