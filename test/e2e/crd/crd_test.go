package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// TestCustomResourceLifecycle is a controller's day with a CRD: create it,
// wait for Established, watch and create custom resources, update status
// through its subresource, scale through the scale subresource, and delete
// the CRD, which deletes its objects.
func TestCustomResourceLifecycle(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, e2eutil.CronTabCRD)
	d := e.Dynamic(t)
	gvr := schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}
	crs := d.Resource(gvr).Namespace(ns)

	w, err := crs.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer w.Stop()

	ct := e2eutil.FromYAML(t, `
apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: my-cron
spec:
  cronSpec: "* * * * */5"
  replicas: 2
`)
	created, err := crs.Create(e2eutil.Ctx(t), ct, metav1.CreateOptions{})
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
	updated, err := crs.Update(e2eutil.Ctx(t), created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(updated.Object, "status"); found {
		t.Errorf("update of the main resource set status: %v", updated.Object["status"])
	}
	updated.Object["status"] = map[string]any{"replicas": int64(2), "labelSelector": "app=cron"}
	withStatus, err := crs.UpdateStatus(e2eutil.Ctx(t), updated, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if r, _, _ := unstructured.NestedInt64(withStatus.Object, "status", "replicas"); r != 2 {
		t.Errorf("status.replicas = %d after UpdateStatus, want 2", r)
	}

	// Scale reads and writes spec.replicas.
	scale, err := crs.Get(e2eutil.Ctx(t), "my-cron", metav1.GetOptions{}, "scale")
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
	if _, err := crs.Update(e2eutil.Ctx(t), scale, metav1.UpdateOptions{}, "scale"); err != nil {
		t.Fatalf("update scale: %v", err)
	}
	got, err := crs.Get(e2eutil.Ctx(t), "my-cron", metav1.GetOptions{})
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
	if err := d.Resource(e2eutil.CRDGVR).Delete(e2eutil.Ctx(t), "crontabs.stable.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete CRD: %v", err)
	}
	e2eutil.Eventually(t, 20*time.Second, "CRD and its objects gone", func(c context.Context) (bool, error) {
		_, err := d.Resource(e2eutil.CRDGVR).Get(c, "crontabs.stable.example.com", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if _, err := crs.Get(e2eutil.Ctx(t), "my-cron", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("custom resource after its CRD was deleted: err = %v, want NotFound", err)
	}
	if keys := e.EtcdKeys(t); strings.Contains(strings.Join(keys, "\n"), "/stable.example.com/crontabs/") {
		t.Errorf("custom resources left in etcd: %v", keys)
	}

	// Re-created with the same name, it serves again.
	e.CreateCRD(t, e2eutil.CronTabCRD)
	if _, err := crs.Create(e2eutil.Ctx(t), ct, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create after re-creating the CRD: %v", err)
	}
}

// TestCustomResourceValidation: schema, CEL and unknown fields are checked
// as kube checks them, with kube's codes, paths and messages.
func TestCustomResourceValidation(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	e.CreateCRD(t, e2eutil.CronTabCRD)
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
			r := e.Do(t, "POST", path+tt.query, body(tt.name, tt.spec), "Content-Type", "application/json")
			if tt.code >= 400 {
				reason := metav1.StatusReasonInvalid
				if tt.code == 400 {
					reason = metav1.StatusReasonBadRequest
				}
				s := r.WantStatus(t, tt.code, reason, "")
				if !strings.Contains(s.Message, tt.message) {
					t.Errorf("message = %q, want it to contain %q", s.Message, tt.message)
				}
				return
			}
			if r.Code != tt.code {
				t.Fatalf("code = %d (%s), want %d", r.Code, r.Body, tt.code)
			}
			warning := strings.Join(r.Header.Values("Warning"), "\n")
			if tt.warning != "" && !strings.Contains(warning, tt.warning) || tt.warning == "" && warning != "" {
				t.Errorf("warnings = %q, want %q", warning, tt.warning)
			}
			if strings.Contains(string(r.Body), `"foo"`) {
				t.Errorf("unknown field was stored: %s", r.Body)
			}
		})
	}
	// Nothing invalid was stored.
	r := e.Do(t, "GET", path, nil)
	for _, bad := range []string{"too-many", "bad-cron", "wrong-type", `"cel"`, "unknown-strict"} {
		if strings.Contains(string(r.Body), bad) {
			t.Errorf("%s was stored: %s", bad, r.Body)
		}
	}
}
