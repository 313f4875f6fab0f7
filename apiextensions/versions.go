package apiextensions

import (
	"context"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/apiextensions/conversion"
)

// crdVersions are the served versions of a CRD's resource, of its status
// and of its scale, which webhooks and policies with matchPolicy
// Equivalent match: objects converted by the CRD's conversion (None or
// Webhook); a Scale is an autoscaling/v1 Scale at every version, as kube
// registers it, so it is the same object at each.
type crdVersions struct {
	main, status, scale *admission.Versions
}

// sameScale is the conversion of a Scale between versions of a resource:
// a copy.
func sameScale(_ context.Context, obj runtime.Object, _ schema.GroupVersionKind) (runtime.Object, error) {
	return obj.DeepCopyObject(), nil
}

// scaleKind is the kind of every custom resource's scale.
var scaleKind = schema.GroupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}

func newCRDVersions(crd *apiextv1.CustomResourceDefinition, c conversion.Converter) crdVersions {
	convert := func(ctx context.Context, obj runtime.Object, to schema.GroupVersionKind) (runtime.Object, error) {
		return c.Convert(ctx, obj, to.GroupVersion())
	}
	out := crdVersions{main: &admission.Versions{Convert: convert}, status: &admission.Versions{Convert: convert},
		scale: &admission.Versions{Convert: sameScale}}
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
		version := admission.Version{Resource: gv.WithResource(crd.Status.AcceptedNames.Plural), Kind: gv.WithKind(crd.Status.AcceptedNames.Kind)}
		out.main.List = append(out.main.List, version)
		if v.Subresources != nil && v.Subresources.Status != nil {
			out.status.List = append(out.status.List, version)
		}
		if v.Subresources != nil && v.Subresources.Scale != nil {
			out.scale.List = append(out.scale.List, admission.Version{Resource: version.Resource, Kind: scaleKind})
		}
	}
	return out
}
