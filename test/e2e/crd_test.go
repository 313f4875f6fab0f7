package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// cronTabCRD is the CronTab of kube's CRD documentation, with status and
// scale subresources, printer columns and a CEL rule.
const cronTabCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.labelSelector
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.replicas <= self.maxReplicas"
              message: "replicas must not exceed maxReplicas"
            properties:
              cronSpec:
                type: string
                pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'
              image:
                type: string
                default: busybox
              replicas:
                type: integer
                minimum: 0
                maximum: 10
              maxReplicas:
                type: integer
                default: 10
          status:
            type: object
            properties:
              replicas:
                type: integer
              labelSelector:
                type: string
`

func fromYAML(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func (e *env) dynamic(t *testing.T) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// createCRD creates a CRD and waits until it is established and its
// resources are in discovery.
func (e *env) createCRD(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	d := e.dynamic(t)
	crd, err := d.Resource(crdGVR).Create(ctx(t), fromYAML(t, doc), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating CRD: %v", err)
	}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	version := versions[0].(map[string]any)["name"].(string)
	disco := discovery.NewDiscoveryClientForConfigOrDie(e.Config)
	eventually(t, 10*time.Second, "CRD established and discovered", func(c context.Context) (bool, error) {
		got, err := d.Resource(crdGVR).Get(c, crd.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !hasCondition(got, "Established", "True") {
			return false, nil
		}
		list, err := disco.ServerResourcesForGroupVersion(group + "/" + version)
		if err != nil {
			return false, nil
		}
		for _, r := range list.APIResources {
			if r.Name == plural {
				return true, nil
			}
		}
		return false, nil
	})
	return crd
}

func hasCondition(crd *unstructured.Unstructured, typ, status string) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == typ && m["status"] == status {
			return true
		}
	}
	return false
}

// TestCustomResourceLifecycle is a controller's day with a CRD: create it,
// wait for Established, watch and create custom resources, update status
// through its subresource, scale through the scale subresource, and delete
// the CRD, which deletes its objects.
func TestCustomResourceLifecycle(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	e.createCRD(t, cronTabCRD)
	d := e.dynamic(t)
	gvr := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}
	crs := d.Resource(gvr).Namespace(ns)

	w, err := crs.Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	ct := fromYAML(t, `
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-cron
spec:
  cronSpec: "* * * * */5"
  replicas: 2
`)
	created, err := crs.Create(ctx(t), ct, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if img, _, _ := unstructured.NestedString(created.Object, "spec", "image"); img != "busybox" {
		t.Errorf("spec.image = %q, want the default busybox", img)
	}
	if created.GetGeneration() != 1 {
		t.Errorf("generation = %d, want 1", created.GetGeneration())
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "my-cron" {
			t.Errorf("first event = %s %v, want ADDED my-cron", ev.Type, ev.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event for the created custom resource")
	}

	// The main resource does not change status; /status does, and only it.
	created.Object["status"] = map[string]any{"replicas": int64(7)}
	updated, err := crs.Update(ctx(t), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(updated.Object, "status"); found {
		t.Errorf("update of the main resource set status: %v", updated.Object["status"])
	}
	updated.Object["status"] = map[string]any{"replicas": int64(2), "labelSelector": "app=cron"}
	withStatus, err := crs.UpdateStatus(ctx(t), updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(withStatus.Object, "status", "replicas"); r != 2 {
		t.Errorf("status.replicas = %d after UpdateStatus, want 2", r)
	}

	// Scale reads and writes spec.replicas.
	scale, err := crs.Get(ctx(t), "my-cron", metav1.GetOptions{}, "scale")
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(scale.Object, "spec", "replicas"); r != 2 {
		t.Errorf("scale spec.replicas = %d, want 2", r)
	}
	if sel, _, _ := unstructured.NestedString(scale.Object, "status", "selector"); sel != "app=cron" {
		t.Errorf("scale status.selector = %q, want app=cron", sel)
	}
	_ = unstructured.SetNestedField(scale.Object, int64(5), "spec", "replicas")
	if _, err := crs.Update(ctx(t), scale, metav1.UpdateOptions{}, "scale"); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	got, err := crs.Get(ctx(t), "my-cron", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 5 {
		t.Errorf("spec.replicas = %d after scaling, want 5", r)
	}
	if got.GetGeneration() != 2 {
		t.Errorf("generation = %d after a spec change, want 2", got.GetGeneration())
	}

	// Deleting the CRD deletes its objects, then the CRD.
	if err := d.Resource(crdGVR).Delete(ctx(t), "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete CRD: %v", err)
	}
	eventually(t, 20*time.Second, "CRD and its objects gone", func(c context.Context) (bool, error) {
		_, err := d.Resource(crdGVR).Get(c, "crontabs.stable.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := crs.Get(ctx(t), "my-cron", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("custom resource after its CRD was deleted: err = %v, want NotFound", err)
	}
	if keys := e.EtcdKeys(t); strings.Contains(strings.Join(keys, "\n"), "/stable.example.com/crontabs/") {
		t.Errorf("custom resources left in etcd: %v", keys)
	}

	// Re-created with the same name, it serves again.
	e.createCRD(t, cronTabCRD)
	if _, err := crs.Create(ctx(t), ct, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create after re-creating the CRD: %v", err)
	}
}

// TestCustomResourceValidation: schema, CEL and unknown fields are checked
// as kube checks them, with kube's codes, paths and messages.
func TestCustomResourceValidation(t *testing.T) {
	e := start(t)
	ns := e.namespace(t)
	e.createCRD(t, cronTabCRD)
	path := "/apis/stable.example.com/v1/namespaces/" + ns + "/crontabs"
	body := func(name, spec string) []byte {
		return []byte(`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"` + name + `"},"spec":` + spec + `}`)
	}
	for _, tt := range []struct {
		name, spec, query string
		code              int
		message, warning  string
	}{
		{"too-many", `{"cronSpec":"* * * * *","replicas":20,"maxReplicas":20}`, "", 422,
			`CronTab.stable.example.com "too-many" is invalid: spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10`, ""},
		{"bad-cron", `{"cronSpec":"nope"}`, "", 422, `spec.cronSpec: Invalid value: "nope": spec.cronSpec in body should match`, ""},
		{"wrong-type", `{"replicas":"two"}`, "", 422, `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`, ""},
		{"cel", `{"replicas":5,"maxReplicas":3}`, "", 422, `CronTab.stable.example.com "cel" is invalid: spec: Invalid value: replicas must not exceed maxReplicas`, ""},
		{"unknown-strict", `{"replicas":1,"foo":1}`, "?fieldValidation=Strict", 400, `strict decoding error: unknown field "spec.foo"`, ""},
		{"unknown-warn", `{"replicas":1,"foo":1}`, "", 201, "", `299 - "unknown field \"spec.foo\""`},
		{"unknown-ignore", `{"replicas":1,"foo":1}`, "?fieldValidation=Ignore", 201, "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, "POST", path+tt.query, body(tt.name, tt.spec), "Content-Type", "application/json")
			if tt.code >= 400 {
				reason := metav1.StatusReasonInvalid
				if tt.code == 400 {
					reason = metav1.StatusReasonBadRequest
				}
				s := r.wantStatus(t, tt.code, reason, "")
				if !strings.Contains(s.Message, tt.message) {
					t.Errorf("message = %q, want it to contain %q", s.Message, tt.message)
				}
				return
			}
			if r.code != tt.code {
				t.Fatalf("code = %d (%s), want %d", r.code, r.body, tt.code)
			}
			warning := strings.Join(r.header.Values("Warning"), "\n")
			if tt.warning != "" && !strings.Contains(warning, tt.warning) || tt.warning == "" && warning != "" {
				t.Errorf("warnings = %q, want %q", warning, tt.warning)
			}
			if strings.Contains(string(r.body), `"foo"`) {
				t.Errorf("unknown field was stored: %s", r.body)
			}
		})
	}
	// Nothing invalid was stored.
	r := e.do(t, "GET", path, nil)
	for _, bad := range []string{"too-many", "bad-cron", "wrong-type", `"cel"`, "unknown-strict"} {
		if strings.Contains(string(r.body), bad) {
			t.Errorf("%s was stored: %s", bad, r.body)
		}
	}
}
