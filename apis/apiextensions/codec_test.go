package apiextensions_test

import (
	"encoding/json"
	"reflect"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/apis/scheme"
)

// semantic is the JSON value of data, for comparisons that ignore key order
// and white space.
func semantic(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	return v
}

func decodeCRD(t *testing.T, data []byte) *apiextv1.CustomResourceDefinition {
	t.Helper()
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := apiextv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"); *gvk != want {
		t.Fatalf("decoded as %v, want %v", gvk, want)
	}
	crd, ok := obj.(*apiextv1.CustomResourceDefinition)
	if !ok {
		t.Fatalf("decoded a %T", obj)
	}
	return crd
}

// A definition survives decoding and encoding by the server's codecs: the
// JSON written is the JSON read, and so is a deep copy's.
func TestRoundTripJSON(t *testing.T) {
	encoder := scheme.Codecs.LegacyCodec(apiextv1.SchemeGroupVersion)
	minimal := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"foos.example.com"},
		"spec":{"group":"example.com","names":{"plural":"foos","kind":"Foo"},"scope":"Cluster",
		"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`
	for name, in := range map[string]string{"full": fullCRD, "minimal": minimal} {
		t.Run(name, func(t *testing.T) {
			crd := decodeCRD(t, []byte(in))
			out, err := runtime.Encode(encoder, crd)
			if err != nil {
				t.Fatal(err)
			}
			got, want := semantic(t, out), semantic(t, []byte(in))
			if name == "minimal" {
				// status is not omitempty: kube writes its empty form.
				want.(map[string]any)["status"] = map[string]any{
					"conditions": nil, "acceptedNames": map[string]any{"plural": "", "kind": ""}, "storedVersions": nil,
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("re-encoded JSON differs:\n got %s\nwant %s", out, in)
			}

			copied, err := runtime.Encode(encoder, crd.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(semantic(t, copied), got) {
				t.Errorf("deep copy encodes differently:\n got %s\nwant %s", copied, out)
			}
			// Raw JSON values keep their input bytes (white space
			// included) until encoded, so the encoded form is what
			// must be stable.
			again, err := runtime.Encode(encoder, decodeCRD(t, out))
			if err != nil {
				t.Fatal(err)
			}
			if string(again) != string(out) {
				t.Errorf("encoding is not stable:\n got %s\nwant %s", again, out)
			}
		})
	}
}

// YAML bodies (kubectl apply -f crd.yaml) decode to the same object.
func TestRoundTripYAML(t *testing.T) {
	y, err := yaml.JSONToYAML([]byte(fullCRD))
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, fromJSON := decodeCRD(t, y), decodeCRD(t, []byte(fullCRD))
	a, _ := json.Marshal(fromYAML)
	b, _ := json.Marshal(fromJSON)
	if !reflect.DeepEqual(semantic(t, a), semantic(t, b)) {
		t.Errorf("YAML decodes differently:\n got %s\nwant %s", a, b)
	}
}

// Spot checks of what the full definition decodes to, in Go terms.
func TestDecodedFields(t *testing.T) {
	crd := decodeCRD(t, []byte(fullCRD))
	v1 := crd.Spec.Versions[1]
	root := v1.Schema.OpenAPIV3Schema
	spec := root.Properties["spec"]
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}
	check("replicas default", string(spec.Properties["replicas"].Default.Raw), "1")
	check("replicas maximum", *spec.Properties["replicas"].Maximum, 100.0)
	check("mode enum", len(spec.Properties["mode"].Enum), 3)
	check("mode enum null", spec.Properties["mode"].Enum[2].Raw, []byte(nil))
	check("free", *spec.Properties["free"].AdditionalProperties, apiextv1.JSONSchemaPropsOrBool{Allows: true})
	check("closed", *spec.Properties["closed"].AdditionalProperties, apiextv1.JSONSchemaPropsOrBool{Allows: false})
	check("labels", spec.Properties["labels"].AdditionalProperties.Schema.Type, "string")
	check("labels allows", spec.Properties["labels"].AdditionalProperties.Allows, true)
	check("ports items", spec.Properties["ports"].Items.Schema.Properties["protocol"].Type, "string")
	check("ports list-type", *spec.Properties["ports"].XListType, "map")
	check("tuple", len(spec.Properties["tuple"].Items.JSONSchemas), 2)
	check("tuple schema", spec.Properties["tuple"].Items.Schema, (*apiextv1.JSONSchemaProps)(nil))
	check("int-or-string", spec.Properties["port"].XIntOrString, true)
	check("embedded", spec.Properties["template"].XEmbeddedResource, true)
	check("rule reason", *root.XValidations[0].Reason, apiextv1.FieldValueForbidden)
	check("optionalOldSelf", *root.XValidations[1].OptionalOldSelf, true)
	check("webhook port", *crd.Spec.Conversion.Webhook.ClientConfig.Service.Port, int32(8443))
	check("caBundle", string(crd.Spec.Conversion.Webhook.ClientConfig.CABundle), "ca-bundle")
	check("scale selector", *v1.Subresources.Scale.LabelSelectorPath, ".status.selector")
	check("status subresource", v1.Subresources.Status, &apiextv1.CustomResourceSubresourceStatus{})
	check("established", crd.Status.Conditions[1].Type, apiextv1.Established)
}
