// Package noderestriction is kube's NodeRestriction admission plugin: a
// kubelet (user system:node:<name> in group system:nodes) may write only
// its own Node, the pods bound to it, mirror pods, its own lease, CSINode
// and ResourceSlices, and tokens and pod certificates only for the pods it
// runs. The Node authorizer decides which kinds a kubelet may write; this
// plugin, which sees the objects, narrows that down to its own.
package noderestriction

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/authz/node"
)

// Getters read the objects a kubelet's writes refer to. kube's plugin reads
// them from informers, so a getter's NotFound is worded as a lister's
// (`pod "x" not found`): some are handed to the client as they are.
type Getters struct {
	Pods            func(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	Nodes           func(ctx context.Context, name string) (*corev1.Node, error)
	ServiceAccounts func(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
	Claims          func(ctx context.Context, namespace, name string) (*corev1.PersistentVolumeClaim, error)
	Volumes         func(ctx context.Context, name string) (*corev1.PersistentVolume, error)
	CSIDrivers      func(ctx context.Context, name string) (*storagev1.CSIDriver, error)
}

// Plugin is the NodeRestriction admission plugin.
type Plugin struct {
	get Getters
	// authz decides the token audiences and pod certificate signers a
	// kubelet asks for that no pod of its refers to.
	authz authz.Authorizer
}

// New returns the plugin reading objects with get and asking az.
func New(get Getters, az authz.Authorizer) *Plugin { return &Plugin{get: get, authz: az} }

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
	_ admission.Handles   = (*Plugin)(nil)
)

var (
	podResource     = schema.GroupResource{Resource: "pods"}
	nodeResource    = schema.GroupResource{Resource: "nodes"}
	pvcResource     = schema.GroupResource{Resource: "persistentvolumeclaims"}
	leaseResource   = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	csiNodeResource = schema.GroupResource{Group: "storage.k8s.io", Resource: "csinodes"}
	csrResource     = schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}
	saResource      = schema.GroupResource{Resource: "serviceaccounts"}
	sliceResource   = schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}
	pcrResource     = schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}
)

// Handles: kube's plugin takes part in creates, updates and deletes.
func (p *Plugin) Handles(op admission.Operation) bool {
	return op == admission.Create || op == admission.Update || op == admission.Delete
}

// Admit checks creates and updates in the mutating phase, before the
// object is validated, where kube's plugin runs.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	if a.Operation == admission.Delete {
		return nil
	}
	return p.admit(ctx, a)
}

// Validate checks deletes, which capstan admits only in the validating
// phase, with the stored object at hand.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Delete {
		return nil
	}
	return p.admit(ctx, a)
}

func (p *Plugin) admit(ctx context.Context, a *admission.Attributes) error {
	u, _ := authn.UserFrom(ctx)
	nodeName, isNode := node.Identity(u)
	if !isNode {
		return nil
	}
	if nodeName == "" {
		return forbidden(a, "could not determine node from user %q", u.Name)
	}
	switch a.Resource.GroupResource() {
	case podResource:
		switch a.Subresource {
		case "":
			return p.admitPod(ctx, nodeName, a)
		case "status":
			return admitPodStatus(nodeName, a)
		case "eviction":
			return p.admitPodEviction(ctx, nodeName, a)
		default:
			return forbidden(a, "unexpected pod subresource %q, only 'status' and 'eviction' are allowed", a.Subresource)
		}
	case nodeResource:
		return admitNode(nodeName, a)
	case pvcResource:
		if a.Subresource != "status" {
			return forbidden(a, "may only update PVC status")
		}
		return admitPVCStatus(nodeName, a)
	case leaseResource:
		return admitLease(nodeName, a)
	case csiNodeResource:
		return admitCSINode(nodeName, a)
	case csrResource:
		return admitCSR(nodeName, a)
	case saResource:
		return p.admitToken(ctx, nodeName, a)
	case sliceResource:
		return admitResourceSlice(nodeName, a)
	case pcrResource:
		return p.admitPodCertificateRequest(ctx, nodeName, a)
	}
	return nil
}

// forbidden is kube's admission 403: the resource and name of the request
// (the object's name or generateName, or "Unknown", when it has none).
func forbidden(a *admission.Attributes, format string, args ...any) error {
	return admission.NewForbidden(a, fmt.Errorf(format, args...))
}

func (p *Plugin) admitPod(ctx context.Context, nodeName string, a *admission.Attributes) error {
	switch a.Operation {
	case admission.Create:
		return p.admitMirrorPod(ctx, nodeName, a)
	case admission.Delete:
		pod, ok := a.OldObject.(*corev1.Pod)
		if !ok {
			return forbidden(a, "unexpected type %T", a.OldObject)
		}
		if pod.Spec.NodeName != nodeName {
			return forbidden(a, "node %q can only delete pods with spec.nodeName set to itself", nodeName)
		}
		return nil
	default:
		return forbidden(a, "unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, nodeName)
	}
}

// admitMirrorPod: the only pods a kubelet creates are the mirrors of its
// static pods, owned by its Node and referring to no other API object.
func (p *Plugin) admitMirrorPod(ctx context.Context, nodeName string, a *admission.Attributes) error {
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return forbidden(a, "unexpected type %T", a.Object)
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; !mirror {
		return forbidden(a, "pod does not have %q annotation, node %q can only create mirror pods", corev1.MirrorPodAnnotationKey, nodeName)
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, "node %q can only create pods with spec.nodeName set to itself", nodeName)
	}
	switch len(pod.OwnerReferences) {
	case 0:
		return forbidden(a, "node %q can only create pods with an owner reference set to itself", nodeName)
	case 1:
	default:
		return forbidden(a, "node %q can only create pods with a single owner reference set to itself", nodeName)
	}
	owner := pod.OwnerReferences[0]
	if owner.APIVersion != "v1" || owner.Kind != "Node" || owner.Name != nodeName {
		return forbidden(a, "node %q can only create pods with an owner reference set to itself", nodeName)
	}
	if owner.Controller == nil || !*owner.Controller {
		return forbidden(a, "node %q can only create pods with a controller owner reference set to itself", nodeName)
	}
	if owner.BlockOwnerDeletion != nil && *owner.BlockOwnerDeletion {
		return forbidden(a, "node %q must not set blockOwnerDeletion on an owner reference", nodeName)
	}
	n, err := p.get.Nodes(ctx, nodeName)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return forbidden(a, "error looking up node %s to verify uid: %v", nodeName, err)
	}
	if owner.UID != n.UID {
		return forbidden(a, "node %s UID mismatch: expected %s got %s", nodeName, owner.UID, n.UID)
	}
	if resource, err := apiReference(pod); err != nil {
		return forbidden(a, "error checking mirror pod for API references: %v", err)
	} else if resource != "" {
		return forbidden(a, "node %q can not create pods that reference %s", nodeName, resource)
	}
	return nil
}

func admitPodStatus(nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Update {
		return forbidden(a, "unexpected operation %q", a.Operation)
	}
	old, ok := a.OldObject.(*corev1.Pod)
	if !ok {
		return forbidden(a, "unexpected type %T", a.OldObject)
	}
	if old.Spec.NodeName != nodeName {
		return forbidden(a, "node %q can only update pod status for pods with spec.nodeName set to itself", nodeName)
	}
	pod, ok := a.Object.(*corev1.Pod)
	if !ok {
		return forbidden(a, "unexpected type %T", a.Object)
	}
	if !labels.Equals(old.Labels, pod.Labels) {
		return forbidden(a, "node %q cannot update labels through pod status", nodeName)
	}
	// The resource claims a pod was given are the scheduler's and the
	// resource claim controller's to record, not the kubelet's. kube's
	// message has "statues".
	switch {
	case !equality.Semantic.DeepEqual(old.Status.ResourceClaimStatuses, pod.Status.ResourceClaimStatuses):
		return forbidden(a, "node %q cannot update resource claim statues", nodeName)
	case !equality.Semantic.DeepEqual(old.Status.ExtendedResourceClaimStatus, pod.Status.ExtendedResourceClaimStatus):
		return forbidden(a, "node %q cannot update extended resource claim status", nodeName)
	case !equality.Semantic.DeepEqual(old.Status.NodeAllocatableResourceClaimStatuses, pod.Status.NodeAllocatableResourceClaimStatuses):
		return forbidden(a, "node %q cannot update node allocatable resource claim statuses", nodeName)
	}
	return nil
}

func (p *Plugin) admitPodEviction(ctx context.Context, nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Create {
		return forbidden(a, "unexpected operation %s", a.Operation)
	}
	eviction, ok := a.Object.(*policyv1.Eviction)
	if !ok {
		return forbidden(a, "unexpected type %T", a.Object)
	}
	// The path names the pod; the body's name only when the path does not.
	podName := a.Name
	if podName == "" {
		if eviction.Name == "" {
			return forbidden(a, "could not determine pod from request data")
		}
		podName = eviction.Name
	}
	pod, err := p.get.Pods(ctx, a.Namespace, podName)
	if apierrors.IsNotFound(err) {
		return err
	}
	if err != nil {
		return admission.NewForbidden(a, err)
	}
	if pod.Spec.NodeName != nodeName {
		return forbidden(a, "node %s can only evict pods with spec.nodeName set to itself", nodeName)
	}
	return nil
}
