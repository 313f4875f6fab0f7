package conversion

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// crdFacts is what the ObjectConvertor learns of the CRD from a Converter
// built by New.
type crdFacts interface {
	fieldLabelSupported(gv schema.GroupVersion, label string) bool
	convertsScale() bool
}

// NewObjectConvertor adapts c to a runtime.ObjectConvertor of the CRD's
// unstructured objects, such as managedfields.NewDefaultCRDFieldManager
// takes. Its input is never modified. When the CRD has a scale subresource
// it also converts autoscaling/v1 Scale objects, to and from unstructured.
// Its field labels are metadata.name, metadata.namespace (of namespaced
// resources) and the version's selectableFields; for a Converter not built
// by New, only the first two. Its webhook calls are bounded by the
// converter's timeout only, having no context.
func NewObjectConvertor(c Converter) runtime.ObjectConvertor {
	return &objectConvertor{c: c}
}

type objectConvertor struct {
	c Converter
}

var scaleGVK = autoscalingv1.SchemeGroupVersion.WithKind("Scale")

func (o *objectConvertor) facts() crdFacts {
	f, _ := o.c.(crdFacts)
	return f
}

func (o *objectConvertor) convertsScale() bool {
	f := o.facts()
	return f != nil && f.convertsScale()
}

// Convert converts in into out, at out's version.
func (o *objectConvertor) Convert(in, out, _ any) error {
	if o.convertsScale() {
		_, inScale := in.(*autoscalingv1.Scale)
		_, outScale := out.(*autoscalingv1.Scale)
		if inScale || outScale {
			return convertScale(in, out)
		}
	}
	uin, ok := in.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("input type %T in not valid for unstructured conversion to %T", in, out)
	}
	uout, ok := out.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("output type %T in not valid for unstructured conversion from %T", out, in)
	}
	converted, err := o.ConvertToVersion(uin, uout.GroupVersionKind().GroupVersion())
	if err != nil {
		return err
	}
	u, ok := converted.(runtime.Unstructured)
	if !ok {
		return fmt.Errorf("CR conversion failed")
	}
	uout.SetUnstructuredContent(u.UnstructuredContent())
	return nil
}

// ConvertToVersion converts in, an unstructured object or list, to the
// version target chooses for it.
func (o *objectConvertor) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	if s, ok := in.(*autoscalingv1.Scale); ok && o.convertsScale() {
		to, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{scaleGVK})
		if !ok || to != scaleGVK {
			return nil, fmt.Errorf("%v is not suitable for converting to %q", scaleGVK, target)
		}
		out := s.DeepCopy()
		out.SetGroupVersionKind(scaleGVK)
		return out, nil
	}
	from := in.GetObjectKind().GroupVersionKind()
	to, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{from})
	if !ok {
		return nil, fmt.Errorf("%v is unstructured and is not suitable for converting to %q", from.String(), target)
	}
	return o.c.Convert(context.Background(), in, to.GroupVersion())
}

// ConvertFieldLabel accepts the field labels the CRD's resources may be
// selected by, unchanged.
func (o *objectConvertor) ConvertFieldLabel(gvk schema.GroupVersionKind, label, value string) (string, string, error) {
	if f := o.facts(); f != nil {
		if f.fieldLabelSupported(gvk.GroupVersion(), label) {
			return label, value, nil
		}
	} else if label == "metadata.name" || label == "metadata.namespace" {
		return label, value, nil
	}
	return "", "", fmt.Errorf("field label not supported: %s", label)
}

// convertScale converts between autoscaling/v1 Scale objects and their
// unstructured form.
func convertScale(in, out any) error {
	switch in := in.(type) {
	case *autoscalingv1.Scale:
		switch out := out.(type) {
		case *autoscalingv1.Scale:
			in.DeepCopyInto(out)
			return nil
		case *unstructured.Unstructured:
			content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in)
			if err != nil {
				return err
			}
			out.SetUnstructuredContent(content)
			out.SetGroupVersionKind(scaleGVK)
			return nil
		}
	case *unstructured.Unstructured:
		if out, ok := out.(*autoscalingv1.Scale); ok {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(in.UnstructuredContent(), out); err != nil {
				return err
			}
			out.SetGroupVersionKind(scaleGVK)
			return nil
		}
	}
	return fmt.Errorf("converting %T to %T is not supported", in, out)
}
