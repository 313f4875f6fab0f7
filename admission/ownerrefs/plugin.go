// Package ownerrefs is kube's OwnerReferencesPermissionEnforcement plugin:
// only a user who may delete an object may change its ownerReferences, and
// only one who may update an owner's finalizers may make a reference to it
// block the owner's deletion (blockOwnerDeletion), since the garbage
// collector's foreground deletion then waits on the object.
package ownerrefs

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/request"
)

// Mapping is one resource a kind is served as.
type Mapping struct {
	Resource   schema.GroupVersionResource
	Namespaced bool
}

// Mapper lists the resources of a kind in a version, or fails with
// meta's NoKindMatchError.
type Mapper func(gk schema.GroupKind, version string) ([]Mapping, error)

// Plugin is the OwnerReferencesPermissionEnforcement plugin.
type Plugin struct {
	authz  authz.Authorizer
	mapper Mapper
}

// New returns the plugin asking az, mapping owners' kinds by mapper.
func New(az authz.Authorizer, mapper Mapper) *Plugin { return &Plugin{authz: az, mapper: mapper} }

var (
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

// Handles creates and updates.
func (*Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update
}

// Validate checks a write that changes the object's ownerReferences
// (pods/status, which the kubelet writes, excepted, as in kube).
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Resource.GroupResource() == (schema.GroupResource{Resource: "pods"}) && a.Subresource == "status" {
		return nil
	}
	if !changesOwners(a.Object, a.OldObject) {
		return nil
	}
	u, _ := authn.UserFrom(ctx)
	if a.Operation != admission.Create {
		del := &request.Info{IsResourceRequest: true, Verb: "delete", Namespace: a.Namespace, APIGroup: a.Resource.Group,
			APIVersion: a.Resource.Version, Resource: a.Resource.Resource, Subresource: a.Subresource, Name: a.Name}
		d, reason, err := p.authz.Authorize(ctx, authz.Attributes{User: u, Info: del})
		if d != authz.Allow {
			return admission.NewForbidden(a, fmt.Errorf("cannot set an ownerRef on a resource you can't delete: %v, %v", reason, err))
		}
	}
	blocking := newBlocking(a.Object, a.OldObject)
	if len(blocking) == 0 {
		return nil
	}
	anything := &request.Info{IsResourceRequest: true, Verb: "update", APIGroup: "*", APIVersion: "*", Resource: "*", Subresource: "finalizers", Name: "*"}
	if d, _, _ := p.authz.Authorize(ctx, authz.Attributes{User: u, Info: anything}); d == authz.Allow {
		return nil
	}
	for _, ref := range blocking {
		if err := p.mayFinalize(ctx, a, u, ref); err != nil {
			return err
		}
	}
	return nil
}

// mayFinalize checks that u may update the finalizers of the owner ref
// names, under every resource its kind is served as.
func (p *Plugin) mayFinalize(ctx context.Context, a *admission.Attributes, u *authn.User, ref metav1.OwnerReference) error {
	mappings, err := p.mappings(ref)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("cannot set blockOwnerDeletion in this case because cannot find RESTMapping for APIVersion %s Kind %s: %v", ref.APIVersion, ref.Kind, err))
	}
	for _, m := range mappings {
		info := &request.Info{IsResourceRequest: true, Verb: "update", APIGroup: m.Resource.Group, APIVersion: m.Resource.Version,
			Resource: m.Resource.Resource, Subresource: "finalizers", Name: ref.Name}
		if m.Namespaced {
			info.Namespace = a.Namespace
		}
		if d, reason, err := p.authz.Authorize(ctx, authz.Attributes{User: u, Info: info}); d != authz.Allow {
			return admission.NewForbidden(a, fmt.Errorf("cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: %v, %v", reason, err))
		}
	}
	return nil
}

func (p *Plugin) mappings(ref metav1.OwnerReference) ([]Mapping, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	return p.mapper(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
}

// changesOwners reports whether the write sets or changes ownerReferences.
func changesOwners(obj, old runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	if old == nil {
		return len(m.GetOwnerReferences()) > 0
	}
	o, err := meta.Accessor(old)
	if err != nil {
		return false
	}
	return !equality.Semantic.DeepEqual(o.GetOwnerReferences(), m.GetOwnerReferences())
}

// newBlocking are the references that block their owner's deletion now
// and did not before (by UID).
func newBlocking(obj, old runtime.Object) []metav1.OwnerReference {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil
	}
	var was map[types.UID]metav1.OwnerReference
	if o, err := meta.Accessor(old); old != nil && err == nil {
		was = map[types.UID]metav1.OwnerReference{}
		for _, r := range o.GetOwnerReferences() {
			was[r.UID] = r
		}
	}
	var out []metav1.OwnerReference
	for _, r := range m.GetOwnerReferences() {
		if !blocks(r) {
			continue
		}
		if prev, ok := was[r.UID]; !ok || !blocks(prev) {
			out = append(out, r)
		}
	}
	return out
}

func blocks(r metav1.OwnerReference) bool {
	return r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
}
