package scheme

import (
	"bytes"
	"cmp"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/diff"
)

// protoMessage is what the protobuf serializer needs of a type.
type protoMessage interface {
	Reset()
	Unmarshal([]byte) error
	Marshal() ([]byte, error)
}

// fuzzKinds are the external kinds of Scheme, in a fixed order so that a
// corpus entry names the same kind on every run.
func fuzzKinds() []schema.GroupVersionKind {
	var kinds []schema.GroupVersionKind
	for gvk := range Scheme.AllKnownTypes() {
		if gvk.Version != runtime.APIVersionInternal {
			kinds = append(kinds, gvk)
		}
	}
	slices.SortFunc(kinds, func(a, b schema.GroupVersionKind) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version), cmp.Compare(a.Kind, b.Kind))
	})
	return kinds
}

// The wire formats the fuzzer decodes: JSON, YAML and raw protobuf (the
// message inside kube's envelope).
var (
	jsonSerializer  = json.NewSerializerWithOptions(json.DefaultMetaFactory, Scheme, Scheme, json.SerializerOptions{})
	yamlSerializer  = json.NewSerializerWithOptions(json.DefaultMetaFactory, Scheme, Scheme, json.SerializerOptions{Yaml: true})
	protoSerializer = protobuf.NewRawSerializer(Scheme, Scheme)
	fuzzFormats     = []runtime.Serializer{jsonSerializer, yamlSerializer, protoSerializer}
	// protoEnvelope is protobuf as the server writes it, in kube's
	// envelope: an object whose fields are all unset is an empty message,
	// which only the envelope carries.
	protoEnvelope = protobuf.NewSerializer(Scheme, Scheme)
)

// wire is the serializer a format's objects are written and read again
// with.
func wire(s runtime.Serializer) runtime.Serializer {
	if s == protoSerializer {
		return protoEnvelope
	}
	return s
}

// FuzzDecodeRoundTrip: any bytes decode into any built-in kind, in JSON,
// YAML or protobuf, without a panic; what decoded encodes to a fixed
// point (encode, decode, encode gives the same bytes); and an object
// read from JSON survives storage's protobuf unchanged.
func FuzzDecodeRoundTrip(f *testing.F) {
	kinds := fuzzKinds()
	index := func(gvk schema.GroupVersionKind) uint16 {
		return uint16(slices.Index(kinds, gvk))
	}
	pod := corev1.SchemeGroupVersion.WithKind("Pod")
	cm := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	crd := schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
	f.Add(index(pod), uint8(0), []byte(`{"metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"cpu":"1.5"}}}]}}`))
	f.Add(index(pod), uint8(1), []byte("metadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    ports: [{containerPort: 80}]\n"))
	f.Add(index(cm), uint8(0), []byte(`{"metadata":{"name":"c","creationTimestamp":"2024-01-01T00:00:00.5Z"},"data":{"k":"v"},"binaryData":{"b":"AAE="}}`))
	f.Add(index(deploy), uint8(0), []byte(`{"spec":{"replicas":3,"strategy":{"rollingUpdate":{"maxSurge":"25%"}},"template":{"spec":{"containers":[{"name":"c"}]}}}}`))
	f.Add(index(crd), uint8(0), []byte(`{"spec":{"versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"default":{"a":1}}}}]}}`))
	f.Add(index(cm), uint8(2), []byte("\x0a\x03\x0a\x01c\x12\x06\x0a\x01k\x12\x01v"))
	f.Add(index(pod), uint8(1), []byte("a: &a [1,2]\nb: *a\n"))
	f.Fuzz(func(t *testing.T, kind uint16, format uint8, data []byte) {
		gvk := kinds[int(kind)%len(kinds)]
		s := fuzzFormats[int(format)%len(fuzzFormats)]
		into, err := Scheme.New(gvk)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := into.(protoMessage); !ok && s == protoSerializer {
			return
		}
		obj, _, err := s.Decode(data, &gvk, into)
		if err != nil {
			return
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		s = wire(s)
		first := encode(t, s, obj)
		again, _, err := s.Decode(first, &gvk, newOf(t, gvk))
		if err != nil {
			t.Fatalf("%v: what was encoded does not decode: %v\n%q", gvk, err, first)
		}
		again.GetObjectKind().SetGroupVersionKind(gvk)
		if second := encode(t, s, again); !bytes.Equal(first, second) {
			t.Fatalf("%v: encoding is not a fixed point:\n%q\n%q", gvk, first, second)
		}
		if s == protoEnvelope {
			return
		}
		if _, ok := again.(protoMessage); !ok {
			return
		}
		stored, _, err := protoEnvelope.Decode(encode(t, protoEnvelope, again), &gvk, newOf(t, gvk))
		if err != nil {
			t.Fatalf("%v: protobuf of a decoded object does not decode: %v", gvk, err)
		}
		stored.GetObjectKind().SetGroupVersionKind(gvk)
		if !apiequality.Semantic.DeepEqual(again, stored) {
			t.Fatalf("%v: protobuf changed the object:\n%s", gvk, diff.Diff(again, stored))
		}
	})
}

func newOf(t *testing.T, gvk schema.GroupVersionKind) runtime.Object {
	obj, err := Scheme.New(gvk)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

func encode(t *testing.T, s runtime.Serializer, obj runtime.Object) []byte {
	var buf bytes.Buffer
	if err := s.Encode(obj, &buf); err != nil {
		t.Fatalf("%T decoded but does not encode: %v", obj, err)
	}
	return buf.Bytes()
}
