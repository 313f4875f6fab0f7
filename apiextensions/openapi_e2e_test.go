package apiextensions_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/internal/testkit"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// openAPICronTab is a CronTab CRD whose schema documents its fields.
const openAPICronTab = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: crontabs, singular: crontab, kind: CronTab, shortNames: [ct]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        description: A CronTab runs an image on a schedule.
        properties:
          spec:
            type: object
            description: What to run and when.
            properties:
              cronSpec:
                type: string
                description: The schedule, in cron format.
              image:
                type: string
                description: The container image to run.
                default: busybox
              replicas:
                type: integer
                description: How many copies to run.
          status:
            type: object
            properties:
              replicas: {type: integer}
`

const (
	cronTabDefinition = "com.example.stable.v1.CronTab"
	cronTabV3Key      = "apis/stable.example.com/v1"
)

// A CRD's kinds appear in /openapi/v2 and in the /openapi/v3 document of
// its group version once it is established, kubectl explains and applies
// them from there, a schema change shows, and deleting the CRD takes them
// out again.
func TestCRDOpenAPI(t *testing.T) {
	s := testkit.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn, err := dynamic.NewForConfig(s.Config)
	if err != nil {
		t.Fatal(err)
	}
	disco := discovery.NewDiscoveryClientForConfigOrDie(s.Config)
	crds := dyn.Resource(crdResource)

	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(openAPICronTab), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the CRD: %v", err)
	}
	openAPIWait(t, "the CRD established and its resource discovered", func() (bool, error) {
		got, err := crds.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if err != nil || !crdEstablished(got) {
			return false, err
		}
		list, err := disco.ServerResourcesForGroupVersion("stable.example.com/v1")
		return err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == "crontabs" }), nil
	})

	// /openapi/v2
	sw := v2Document(ctx, t, disco)
	def, ok := sw.Definitions[cronTabDefinition]
	if !ok {
		t.Fatalf("/openapi/v2 has no %s", cronTabDefinition)
	}
	wantKinds := []any{map[string]any{"group": "stable.example.com", "version": "v1", "kind": "CronTab"}}
	if got := def.Extensions["x-kubernetes-group-version-kind"]; !sameJSON(got, wantKinds) {
		t.Errorf("v2 CronTab kinds = %v, want %v", got, wantKinds)
	}
	if image := def.Properties["spec"].Properties["image"]; image.Description != "The container image to run." || image.Default != nil {
		t.Errorf("v2 spec.image = %+v, want described, without default", image.SchemaProps)
	}
	if _, ok := sw.Definitions["com.example.stable.v1.CronTabList"]; !ok {
		t.Error("/openapi/v2 has no CronTabList")
	}
	if op := sw.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"].Patch; op == nil || slices.Contains(op.Consumes, "application/strategic-merge-patch+json") {
		t.Errorf("v2 PATCH of a CronTab: %+v", op)
	}
	if _, ok := sw.Definitions["io.k8s.api.core.v1.ConfigMap"]; !ok {
		t.Error("/openapi/v2 lost the built-in kinds")
	}

	// /openapi/v3/apis/stable.example.com/v1
	doc := v3Document(ctx, t, disco)
	if doc == nil {
		t.Fatalf("/openapi/v3 does not list %s", cronTabV3Key)
	}
	schema3 := doc.Components.Schemas[cronTabDefinition]
	if schema3 == nil {
		t.Fatalf("the v3 document has no %s", cronTabDefinition)
	}
	if d := schema3.Properties["spec"].Properties["image"].Default; d != "busybox" {
		t.Errorf("v3 spec.image default = %v, want busybox", d)
	}
	if doc.Components.Schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"] == nil {
		t.Error("the v3 document has no ObjectMeta")
	}
	if path := doc.Paths.Paths["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}/status"]; path == nil || path.Put == nil {
		t.Error("the v3 document has no PUT of a CronTab's status")
	}

	// kubectl explains from the v3 document and applies with merge patches,
	// which the document says CronTabs take.
	out, errOut, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "explain", "crontabs.spec")
	if err != nil || !strings.Contains(out, "KIND:       CronTab") || !strings.Contains(out, "cronSpec\t<string>") ||
		!strings.Contains(out, "The schedule, in cron format.") || !strings.Contains(out, "What to run and when.") {
		t.Errorf("kubectl explain crontabs.spec: %v\n%s%s", err, out, errOut)
	}
	manifest := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: nightly\n  namespace: default\nspec:\n  cronSpec: '0 3 * * *'\n  replicas: 1\n"
	out, errOut, err = testkit.RunKubectl(t, s.Kubeconfig, strings.NewReader(manifest), "apply", "-f", "-")
	if err != nil || !strings.Contains(out, "crontab.stable.example.com/nightly created") {
		t.Fatalf("kubectl apply: %v\n%s%s", err, out, errOut)
	}
	changed := strings.Replace(manifest, "replicas: 1", "replicas: 2", 1)
	out, errOut, err = testkit.RunKubectl(t, s.Kubeconfig, strings.NewReader(changed), "apply", "-f", "-")
	if err != nil || !strings.Contains(out, "crontab.stable.example.com/nightly configured") {
		t.Errorf("kubectl apply of a change: %v\n%s%s", err, out, errOut)
	}

	// A schema change shows in the group version's document, though
	// discovery stays as it was.
	got, err := crds.Get(ctx, crd.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	versions, _, _ := unstructured.NestedSlice(got.Object, "spec", "versions")
	v1 := versions[0].(map[string]any)
	specProps := v1["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)["properties"].(map[string]any)
	specProps["suspend"] = map[string]any{"type": "boolean", "description": "Whether runs are suspended."}
	if err := unstructured.SetNestedSlice(got.Object, versions, "spec", "versions"); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating the CRD's schema: %v", err)
	}
	openAPIWait(t, "the new field in the v3 document", func() (bool, error) {
		doc := v3Document(ctx, t, disco)
		if doc == nil || doc.Components.Schemas[cronTabDefinition] == nil {
			return false, nil
		}
		_, ok := doc.Components.Schemas[cronTabDefinition].Properties["spec"].Properties["suspend"]
		return ok, nil
	})
	if _, ok := v2Document(ctx, t, disco).Definitions[cronTabDefinition].Properties["spec"].Properties["suspend"]; !ok {
		t.Error("the new field is not in /openapi/v2")
	}

	// Deleted, the CRD's kinds leave both documents.
	if err := crds.Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the CRD: %v", err)
	}
	openAPIWait(t, "the kinds gone from the documents", func() (bool, error) {
		if _, ok := v2Document(ctx, t, disco).Definitions[cronTabDefinition]; ok {
			return false, nil
		}
		return v3Document(ctx, t, disco) == nil, nil
	})
}

func crdEstablished(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	return slices.ContainsFunc(conds, func(c any) bool {
		m, _ := c.(map[string]any)
		return m["type"] == "Established" && m["status"] == "True"
	})
}

func v2Document(ctx context.Context, t *testing.T, disco *discovery.DiscoveryClient) *spec.Swagger {
	t.Helper()
	body, err := disco.RESTClient().Get().AbsPath("/openapi/v2").SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET /openapi/v2: %v", err)
	}
	var sw spec.Swagger
	if err := json.Unmarshal(body, &sw); err != nil {
		t.Fatalf("decoding /openapi/v2: %v", err)
	}
	return &sw
}

// v3Document is the CronTabs' group version document, nil if /openapi/v3
// does not list it.
func v3Document(ctx context.Context, t *testing.T, disco *discovery.DiscoveryClient) *spec3.OpenAPI {
	t.Helper()
	paths, err := disco.OpenAPIV3().Paths()
	if err != nil {
		t.Fatalf("/openapi/v3: %v", err)
	}
	gv, ok := paths[cronTabV3Key]
	if !ok {
		return nil
	}
	body, err := gv.Schema("application/json")
	if err != nil {
		t.Fatalf("/openapi/v3/%s: %v", cronTabV3Key, err)
	}
	var doc spec3.OpenAPI
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("decoding /openapi/v3/%s: %v", cronTabV3Key, err)
	}
	return &doc
}

func openAPIWait(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return cond()
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
