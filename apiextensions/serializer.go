package apiextensions

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime"
)

// crSerializer is the server's serializer for the endpoints of custom
// resources. The scheme does not know custom resource kinds, so its
// versioning encoders cannot take them (an UnstructuredList is always sent
// through the scheme's converter); custom resources reach the encoder at the
// served version already and are written as they are. Everything else the
// endpoints return (Status, Table, PartialObjectMetadata, Scale) goes
// through the scheme as usual.
type crSerializer struct {
	runtime.NegotiatedSerializer
}

func (s crSerializer) EncoderForVersion(e runtime.Encoder, gv runtime.GroupVersioner) runtime.Encoder {
	return crEncoder{raw: e, versioned: s.NegotiatedSerializer.EncoderForVersion(e, gv)}
}

type crEncoder struct {
	raw, versioned runtime.Encoder
}

func (e crEncoder) Encode(obj runtime.Object, w io.Writer) error {
	if _, ok := obj.(runtime.Unstructured); ok {
		return e.raw.Encode(obj, w)
	}
	return e.versioned.Encode(obj, w)
}

func (e crEncoder) Identifier() runtime.Identifier {
	return "custom-resource-" + e.versioned.Identifier()
}
