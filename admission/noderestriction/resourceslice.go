package noderestriction

import (
	"k8s.io/apimachinery/pkg/runtime"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"

	"github.com/capstan-io/capstan/admission"
)

// admitResourceSlice: a kubelet's DRA drivers publish the devices of its
// own node. The Node authorizer cannot see a created slice's node, nor
// each slice a deletecollection removes, so those are checked here; other
// verbs reach only the slices of its node through the authorizer's graph.
func admitResourceSlice(nodeName string, a *admission.Attributes) error {
	switch a.Operation {
	case admission.Create:
		sliceNode, ok := sliceNodeName(a.Object)
		if !ok {
			return forbidden(a, "unexpected type %T", a.Object)
		}
		if sliceNode != nodeName {
			return forbidden(a, "can only create ResourceSlice with the same NodeName as the requesting node")
		}
	case admission.Delete:
		sliceNode, ok := sliceNodeName(a.OldObject)
		if !ok {
			return forbidden(a, "unexpected type %T", a.OldObject)
		}
		if sliceNode != nodeName {
			return forbidden(a, "can only delete ResourceSlice with the same NodeName as the requesting node")
		}
	}
	return nil
}

// sliceNodeName is the node of a ResourceSlice at any version capstan
// serves, "" for a slice of no single node (which no node name matches).
func sliceNodeName(obj runtime.Object) (string, bool) {
	var name *string
	switch s := obj.(type) {
	case *resourcev1.ResourceSlice:
		name = s.Spec.NodeName
	case *resourcev1beta2.ResourceSlice:
		name = s.Spec.NodeName
	case *resourcev1beta1.ResourceSlice:
		return s.Spec.NodeName, true
	default:
		return "", false
	}
	if name == nil {
		return "", true
	}
	return *name, true
}
