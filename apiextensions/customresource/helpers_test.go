package customresource

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apiextensions/cel"
	crschema "github.com/capstan-io/capstan/apiextensions/schema"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

var cronTabGVK = schema.GroupVersionKind{Group: "stable.example.com", Version: "v1", Kind: "CronTab"}

// cronTabSchema is the openAPIV3Schema of the CronTab of kube's CRD
// walkthrough, with a status, a list set, an embedded resource, a default
// and a CEL rule.
const cronTabSchema = `{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "x-kubernetes-validations": [{
        "rule": "!has(self.image) || self.image.startsWith('registry.example/')",
        "message": "image must come from registry.example"
      }],
      "properties": {
        "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
        "image": {"type": "string"},
        "replicas": {"type": "integer"},
        "color": {"type": "string", "default": "blue"},
        "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
      }
    },
    "status": {
      "type": "object",
      "properties": {
        "replicas": {"type": "integer"},
        "labelSelector": {"type": "string"}
      }
    }
  }
}`

func cronTabStructural(t testing.TB) *crschema.Structural {
	t.Helper()
	var props apiextv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(cronTabSchema), &props); err != nil {
		t.Fatal(err)
	}
	s, err := crschema.NewStructural(&props)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cronTabScale is the scale subresource of the CronTab.
func cronTabScale() *apiextv1.CustomResourceSubresourceScale {
	return &apiextv1.CustomResourceSubresourceScale{
		SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas",
		LabelSelectorPath: ptr.To(".status.labelSelector"),
	}
}

// newCronTabStrategy is the strategy of CronTabs, with the status
// subresource when status is true and the scale subresource always.
func newCronTabStrategy(t testing.TB, status bool) *Strategy {
	t.Helper()
	s := cronTabStructural(t)
	return NewStrategy(StrategyOptions{
		Namespaced: true, Kind: cronTabGVK, Schema: s, CEL: cel.NewValidator(s, true, cel.PerCallLimit),
		Status: status, Scale: cronTabScale(),
		SelectableFields: []apiextv1.SelectableField{{JSONPath: ".spec.cronSpec"}, {JSONPath: ".spec.replicas"}},
	})
}

// cronTab is a valid CronTab named name with spec and status (each left
// out when nil).
func cronTab(name string, spec, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "stable.example.com/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": name, "namespace": "default"},
	}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

// with returns a copy of u with value set at path.
func with(u *unstructured.Unstructured, value any, path ...string) *unstructured.Unstructured {
	u = u.DeepCopy()
	if err := unstructured.SetNestedField(u.Object, runtime.DeepCopyJSONValue(value), path...); err != nil {
		panic(err)
	}
	return u
}

// without returns a copy of u without the field at path.
func without(u *unstructured.Unstructured, path ...string) *unstructured.Unstructured {
	u = u.DeepCopy()
	unstructured.RemoveNestedField(u.Object, path...)
	return u
}
