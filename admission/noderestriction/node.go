package noderestriction

import (
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/apis/internaldiff"
)

// kubeletLabels are the kubernetes.io labels a kubelet sets on its Node
// (k8s.io/kubelet's well-known labels); kubeletLabelNamespaces are the
// label namespaces it owns.
var (
	kubeletLabels = sets.New(
		corev1.LabelHostname, corev1.LabelTopologyZone, corev1.LabelTopologyRegion,
		corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
		corev1.LabelInstanceType, corev1.LabelInstanceTypeStable,
		corev1.LabelOSStable, corev1.LabelArchStable,
		"beta.kubernetes.io/os", "beta.kubernetes.io/arch",
	)
	kubeletLabelNamespaces = []string{corev1.LabelNamespaceSuffixKubelet, corev1.LabelNamespaceSuffixNode}
)

func admitNode(nodeName string, a *admission.Attributes) error {
	if a.Name != nodeName {
		return forbidden(a, "node %q is not allowed to modify node %q", nodeName, a.Name)
	}
	switch a.Operation {
	case admission.Create:
		n, ok := a.Object.(*corev1.Node)
		if !ok {
			return forbidden(a, "unexpected type %T", a.Object)
		}
		if n.Spec.ConfigSource != nil {
			return forbidden(a, "node %q is not allowed to create pods with a non-nil configSource", nodeName)
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, nil)); len(bad) > 0 {
			return forbidden(a, "node %q is not allowed to set the following labels: %s", nodeName, strings.Join(bad, ", "))
		}
	case admission.Update:
		n, ok := a.Object.(*corev1.Node)
		if !ok {
			return forbidden(a, "unexpected type %T", a.Object)
		}
		old, ok := a.OldObject.(*corev1.Node)
		if !ok {
			return forbidden(a, "unexpected type %T", a.OldObject)
		}
		if n.Spec.ConfigSource != nil && !equality.Semantic.DeepEqual(n.Spec.ConfigSource, old.Spec.ConfigSource) {
			return forbidden(a, "node %q is not allowed to update configSource to a new non-nil configSource", nodeName)
		}
		if !equality.Semantic.DeepEqual(n.Spec.Taints, old.Spec.Taints) {
			return forbidden(a, "node %q is not allowed to modify taints", nodeName)
		}
		if !equality.Semantic.DeepEqual(n.OwnerReferences, old.OwnerReferences) {
			return forbidden(a, "node %q is not allowed to modify ownerReferences", nodeName)
		}
		if bad := forbiddenLabels(modifiedLabels(n.Labels, old.Labels)); len(bad) > 0 {
			// kube's message names no node here.
			return forbidden(a, "is not allowed to modify labels: %s", strings.Join(bad, ", "))
		}
	}
	return nil
}

// modifiedLabels are the keys added, removed or changed between a and b.
func modifiedLabels(a, b map[string]string) sets.Set[string] {
	out := sets.New[string]()
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			out.Insert(k)
		}
	}
	for k, v := range b {
		if w, ok := a[k]; !ok || v != w {
			out.Insert(k)
		}
	}
	return out
}

// forbiddenLabels are, sorted, the modified labels a kubelet may not touch:
// those of the node-restriction.kubernetes.io namespace, which only admins
// set so that workloads can trust them, and any other kubernetes.io or
// k8s.io label the kubelet does not own.
func forbiddenLabels(modified sets.Set[string]) []string {
	out := sets.New[string]()
	for key := range modified {
		ns := labelNamespace(key)
		if inNamespace(ns, corev1.LabelNamespaceNodeRestriction) {
			out.Insert(key)
		}
		if (inNamespace(ns, "kubernetes.io") || inNamespace(ns, "k8s.io")) && !isKubeletLabel(key) {
			out.Insert(key)
		}
	}
	return sets.List(out)
}

func isKubeletLabel(key string) bool {
	if kubeletLabels.Has(key) {
		return true
	}
	ns := labelNamespace(key)
	return slices.ContainsFunc(kubeletLabelNamespaces, func(allowed string) bool { return inNamespace(ns, allowed) })
}

// inNamespace: ns is domain or one of its subdomains.
func inNamespace(ns, domain string) bool {
	return ns == domain || strings.HasSuffix(ns, "."+domain)
}

func labelNamespace(key string) string {
	if prefix, _, ok := strings.Cut(key, "/"); ok {
		return prefix
	}
	return ""
}

// admitPVCStatus: a kubelet updates only the capacity and conditions of a
// claim's status (after expanding its volume).
func admitPVCStatus(nodeName string, a *admission.Attributes) error {
	if a.Operation != admission.Update {
		return forbidden(a, "unexpected operation %q", a.Operation)
	}
	pvc, ok := a.Object.(*corev1.PersistentVolumeClaim)
	if !ok {
		return forbidden(a, "unexpected type %T", a.Object)
	}
	old, ok := a.OldObject.(*corev1.PersistentVolumeClaim)
	if !ok {
		return forbidden(a, "unexpected type %T", a.OldObject)
	}
	pvc, old = pvc.DeepCopy(), old.DeepCopy()
	for _, c := range []*corev1.PersistentVolumeClaim{pvc, old} {
		c.ResourceVersion, c.ManagedFields = "", nil
		c.Status.Capacity, c.Status.Conditions = nil, nil
		c.Status.AllocatedResourceStatuses, c.Status.AllocatedResources = nil, nil
	}
	if !equality.Semantic.DeepEqual(old, pvc) {
		return forbidden(a, "node %q is not allowed to update fields other than status.quantity and status.conditions: %v",
			nodeName, internaldiff.Diff(old, pvc))
	}
	return nil
}

// admitLease: a kubelet's heartbeat is the lease of its own name in
// kube-node-lease.
func admitLease(nodeName string, a *admission.Attributes) error {
	if a.Namespace != corev1.NamespaceNodeLease {
		return forbidden(a, "can only access leases in the %q system namespace", corev1.NamespaceNodeLease)
	}
	if objectName(a) != nodeName {
		return forbidden(a, "can only access node lease with the same name as the requesting node")
	}
	return nil
}

func admitCSINode(nodeName string, a *admission.Attributes) error {
	if objectName(a) != nodeName {
		return forbidden(a, "can only access CSINode with the same name as the requesting node")
	}
	if a.Subresource != "status" {
		return nil
	}
	if a.Operation != admission.Update {
		return forbidden(a, "unexpected operation %q", a.Operation)
	}
	n, ok := a.Object.(*storagev1.CSINode)
	old, ok2 := a.OldObject.(*storagev1.CSINode)
	if !ok || !ok2 {
		return forbidden(a, "unexpected type %T", a.Object)
	}
	if !reflect.DeepEqual(n.Spec, old.Spec) {
		return forbidden(a, "node %q is not allowed to modify CSINode spec via status", nodeName)
	}
	return nil
}

// objectName is the name a create's object has (the request's own name is
// empty then) or the name in the path of any other request.
func objectName(a *admission.Attributes) string {
	if a.Operation == admission.Create && a.Object != nil {
		if m, err := meta.Accessor(a.Object); err == nil {
			return m.GetName()
		}
	}
	return a.Name
}
