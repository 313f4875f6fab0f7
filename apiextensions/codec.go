package apiextensions

import (
	"context"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apiextensions/conversion"
)

// crCodec is the storage codec of one served version of a CRD. Custom
// resources are stored as JSON at the CRD's storage version, as kube stores
// them, and read back at the served version: converted by the CRD's
// converter and defaulted by the served version's schema, so that every
// read, watch events included, shows the defaults.
type crCodec struct {
	converter       conversion.Converter
	storage, memory schema.GroupVersion
	defaults        func(obj map[string]any) // nil when the schema has none
}

var _ runtime.Codec = (*crCodec)(nil)

// Encode writes obj at the storage version.
func (c *crCodec) Encode(obj runtime.Object, w io.Writer) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("custom resource storage cannot encode %T", obj)
	}
	if u.GroupVersionKind().GroupVersion() != c.storage {
		out, err := c.converter.Convert(context.TODO(), u, c.storage)
		if err != nil {
			return err
		}
		u = out.(*unstructured.Unstructured)
	}
	return unstructured.UnstructuredJSONScheme.Encode(u, w)
}

// Decode reads stored JSON into into (an *unstructured.Unstructured) at the
// served version.
func (c *crCodec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	u := &unstructured.Unstructured{}
	if _, _, err := unstructured.UnstructuredJSONScheme.Decode(data, nil, u); err != nil {
		return nil, nil, err
	}
	if u.GroupVersionKind().GroupVersion() != c.memory {
		out, err := c.converter.Convert(context.TODO(), u, c.memory)
		if err != nil {
			return nil, nil, err
		}
		u = out.(*unstructured.Unstructured)
	}
	if c.defaults != nil {
		c.defaults(u.Object)
	}
	gvk := u.GroupVersionKind()
	if target, ok := into.(*unstructured.Unstructured); ok {
		target.Object = u.Object
		return target, &gvk, nil
	}
	return u, &gvk, nil
}

// Identifier names the codec for encoders that cache by codec.
func (c *crCodec) Identifier() runtime.Identifier {
	return runtime.Identifier("capstan-custom-resource-" + c.storage.String() + "-" + c.memory.String())
}
