package apiextensions

import (
	"fmt"
	"io"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/runtime/serializer/recognizer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// crdStorageVersion is the version kube-apiserver stores CRDs at: its
// apiextensions server still writes apiextensions.k8s.io/v1beta1, as JSON,
// although it serves only v1.
var crdStorageVersion = v1beta1.SchemeGroupVersion.WithKind("CustomResourceDefinition")

// crdStorageGV is crdStorageVersion's group version, which discovery's
// storageVersionHash names as kube's does.
var crdStorageGV = crdStorageVersion.GroupVersion()

// crdScheme knows the two external versions of CRDs and the internal form
// their generated conversions go through (v1 and v1beta1 convert only to
// and from it). It is the CRD storage codec's alone, so that the server's
// scheme, and what is built from it, never sees v1beta1.
var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(apiextensions.AddToScheme(s))
	utilruntime.Must(apiextv1.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	return s
}()

// crdCodec is the storage codec of CRDs: it writes what kube-apiserver
// writes, byte for byte (JSON at v1beta1), and reads that, and v1 stored as
// JSON or as protobuf (what earlier capstans wrote), into v1 objects.
type crdCodec struct {
	json    runtime.Serializer
	decoder runtime.Decoder
}

var _ runtime.Codec = crdCodec{}

func newCRDCodec() crdCodec {
	js := json.NewSerializerWithOptions(json.DefaultMetaFactory, crdScheme, crdScheme, json.SerializerOptions{})
	return crdCodec{json: js, decoder: recognizer.NewDecoder(protobuf.NewSerializer(crdScheme, crdScheme), js)}
}

// Encode writes a v1 CRD as kube stores it.
func (c crdCodec) Encode(obj runtime.Object, w io.Writer) error {
	crd, ok := obj.(*apiextv1.CustomResourceDefinition)
	if !ok {
		return fmt.Errorf("CRD storage cannot encode %T", obj)
	}
	internal := &apiextensions.CustomResourceDefinition{}
	if err := crdScheme.Convert(crd, internal, nil); err != nil {
		return err
	}
	out := &v1beta1.CustomResourceDefinition{}
	if err := crdScheme.Convert(internal, out, nil); err != nil {
		return err
	}
	out.SetGroupVersionKind(crdStorageVersion)
	return c.json.Encode(out, w)
}

// Decode reads a stored CRD of either version into a v1 CRD. A v1beta1
// CRD gets v1beta1's defaults first, as kube's decoding gives them (CRDs
// stored before v1 existed may lack fields v1 requires).
func (c crdCodec) Decode(data []byte, _ *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, gvk, err := c.decoder.Decode(data, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	out, ok := into.(*apiextv1.CustomResourceDefinition)
	if !ok || out == nil {
		out = &apiextv1.CustomResourceDefinition{}
	}
	switch stored := obj.(type) {
	case *apiextv1.CustomResourceDefinition:
		*out = *stored
	case *v1beta1.CustomResourceDefinition:
		crdScheme.Default(stored)
		internal := &apiextensions.CustomResourceDefinition{}
		if err := crdScheme.Convert(stored, internal, nil); err != nil {
			return nil, nil, err
		}
		*out = apiextv1.CustomResourceDefinition{}
		if err := crdScheme.Convert(internal, out, nil); err != nil {
			return nil, nil, err
		}
	default:
		return nil, nil, fmt.Errorf("stored %s is not a CustomResourceDefinition", gvk)
	}
	out.SetGroupVersionKind(apiextv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return out, gvk, nil
}

// Identifier names the codec for encoders that cache by codec.
func (crdCodec) Identifier() runtime.Identifier { return "capstan-crd-storage-v1beta1-json" }
