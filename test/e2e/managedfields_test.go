package e2e

import (
	"cmp"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/internal/testkit"
	"github.com/capstan-io/capstan/test/e2e/e2eutil"
)

// managedFieldsGolden holds the managed fields kube-apiserver v1.37.2
// recorded for managedFieldsSequence, written by this test run with
// RECORD_MANAGED_FIELDS_KUBECONFIG naming a kubeconfig of that server
// (bench/upstream/run.sh).
var managedFieldsGolden = filepath.Join("testdata", "managedfields.golden.json")

// TestManagedFieldsSequence runs a fixed sequence of creates, updates,
// patches, applies and scale writes, and compares the managed fields after
// each step (times left out) and the errors with what kube-apiserver
// recorded for the same sequence.
func TestManagedFieldsSequence(t *testing.T) {
	if path := os.Getenv("RECORD_MANAGED_FIELDS_KUBECONFIG"); path != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.MarshalIndent(managedFieldsSequence(t, cfg), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(managedFieldsGolden, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	var want []sequenceStep
	data, err := os.ReadFile(managedFieldsGolden)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	got := managedFieldsSequence(t, testkit.StartServer(t).Config)
	if len(got) != len(want) {
		t.Fatalf("%d steps, want %d", len(got), len(want))
	}
	for i := range want {
		// Entries of one operation are ordered by the second they were
		// written in, then by manager: with the times dropped, two steps
		// that cross a second boundary in one run and not in the other
		// order the same entries differently. Compare them by manager.
		byManager(got[i].ManagedFields)
		byManager(want[i].ManagedFields)
		g, _ := json.MarshalIndent(got[i], "", "  ")
		w, _ := json.MarshalIndent(want[i], "", "  ")
		if string(g) != string(w) {
			t.Errorf("step %d (%s):\ngot  %s\nwant %s", i, want[i].Step, g, w)
		}
	}
}

// byManager sorts managed fields entries by operation, manager and
// subresource, keeping the order of equal ones.
func byManager(entries []metav1.ManagedFieldsEntry) {
	slices.SortStableFunc(entries, func(a, b metav1.ManagedFieldsEntry) int {
		return cmp.Or(cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Manager, b.Manager), cmp.Compare(a.Subresource, b.Subresource))
	})
}

// sequenceStep is the outcome of one write: the object's managed fields
// without times, or the error's message.
type sequenceStep struct {
	Step          string                      `json:"step"`
	ManagedFields []metav1.ManagedFieldsEntry `json:"managedFields,omitempty"`
	Error         string                      `json:"error,omitempty"`
}

func managedFieldsSequence(t *testing.T, cfg *rest.Config) []sequenceStep {
	ctx := context.Background()
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nsObj, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "managed-fields-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := nsObj.Name
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	var steps []sequenceStep
	record := func(step string, m metav1.Object, err error) {
		t.Helper()
		s := sequenceStep{Step: step}
		if err != nil {
			s.Error = err.Error()
		} else {
			for _, e := range m.GetManagedFields() {
				e.Time = nil
				s.ManagedFields = append(s.ManagedFields, e)
			}
		}
		steps = append(steps, s)
	}

	cms := c.CoreV1().ConfigMaps(ns)
	cm, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"a": "1"}},
		metav1.CreateOptions{FieldManager: "creator"})
	record("configmap create", cm, err)
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["b"] = "2"
	cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: "updater"})
	record("configmap update", cm, err)
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("cm", ns).WithLabels(map[string]string{"app": "x"}).WithData(map[string]string{"c": "3"}),
		metav1.ApplyOptions{FieldManager: "applier"})
	record("configmap apply", cm, err)
	cm, err = cms.Patch(ctx, "cm", types.MergePatchType, []byte(`{"data":{"d":"4","a":"one"}}`), metav1.PatchOptions{FieldManager: "merger"})
	record("configmap merge patch", cm, err)
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("cm", ns).WithData(map[string]string{"a": "uno"}), metav1.ApplyOptions{FieldManager: "applier"})
	record("configmap apply conflicting", cm, err)
	cm, err = cms.Apply(ctx, corev1ac.ConfigMap("cm", ns).WithData(map[string]string{"a": "uno"}), metav1.ApplyOptions{FieldManager: "applier", Force: true})
	record("configmap apply forced, dropping labels and c", cm, err)
	cm, err = cms.Patch(ctx, "cm", types.JSONPatchType, []byte(`[{"op":"add","path":"/data/e","value":"5"}]`), metav1.PatchOptions{FieldManager: "jsonpatcher"})
	record("configmap json patch", cm, err)

	deps := c.AppsV1().Deployments(ns)
	labels := map[string]string{"app": "web"}
	dep, err := deps.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
			},
		},
	}, metav1.CreateOptions{FieldManager: "creator"})
	record("deployment create", dep, err)
	if err != nil {
		t.Fatal(err)
	}
	scale, err := deps.GetScale(ctx, "web", metav1.GetOptions{})
	record("scale get", scale, err)
	if err != nil {
		t.Fatal(err)
	}
	scale.Spec.Replicas = 3
	scale, err = deps.UpdateScale(ctx, "web", scale, metav1.UpdateOptions{FieldManager: "scaler"})
	record("scale update", scale, err)
	dep, err = deps.Get(ctx, "web", metav1.GetOptions{})
	record("deployment after scale update", dep, err)
	apply := appsv1ac.Deployment("web", ns).WithSpec(appsv1ac.DeploymentSpec().WithReplicas(2))
	dep, err = deps.Apply(ctx, apply, metav1.ApplyOptions{FieldManager: "applier"})
	record("deployment apply conflicting with the scaler", dep, err)
	dep, err = deps.Apply(ctx, apply, metav1.ApplyOptions{FieldManager: "applier", Force: true})
	record("deployment apply forced", dep, err)
	scale, err = deps.GetScale(ctx, "web", metav1.GetOptions{})
	record("scale get after apply", scale, err)
	scale = &autoscalingv1.Scale{}
	err = c.AppsV1().RESTClient().Patch(types.MergePatchType).Namespace(ns).Resource("deployments").Name("web").SubResource("scale").
		Param("fieldManager", "scalepatcher").Body([]byte(`{"spec":{"replicas":4}}`)).Do(ctx).Into(scale)
	record("scale merge patch", scale, err)
	dep, err = deps.Get(ctx, "web", metav1.GetOptions{})
	record("deployment after scale patch", dep, err)

	// The same for a custom resource's scale subresource.
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(scalableCRD), &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	widgets := dyn.Resource(schema.GroupVersionResource{Group: "mf.example.com", Version: "v1", Resource: "widgets"}).Namespace(ns)
	widget := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "mf.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"replicas": int64(1), "color": "red"},
	}}
	var cr *unstructured.Unstructured
	// Custom resources are served a moment after the CRD is established.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		cr, err = widgets.Create(ctx, widget, metav1.CreateOptions{FieldManager: "creator"})
		return err == nil, nil
	})
	record("custom resource create", cr, err)
	if err != nil {
		t.Fatal(err)
	}
	crScale := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": map[string]any{"name": "w", "namespace": ns},
		"spec": map[string]any{"replicas": int64(3)},
	}}
	crScale, err = widgets.Update(ctx, crScale, metav1.UpdateOptions{FieldManager: "scaler"}, "scale")
	record("custom resource scale update", crScale, err)
	cr, err = widgets.Get(ctx, "w", metav1.GetOptions{})
	record("custom resource after scale update", cr, err)
	applied := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "mf.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w", "namespace": ns},
		"spec": map[string]any{"replicas": int64(2)},
	}}
	cr, err = widgets.Apply(ctx, "w", applied, metav1.ApplyOptions{FieldManager: "applier"})
	record("custom resource apply conflicting with the scaler", cr, err)
	cr, err = widgets.Apply(ctx, "w", applied, metav1.ApplyOptions{FieldManager: "applier", Force: true})
	record("custom resource apply forced", cr, err)
	return steps
}

const scalableCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.mf.example.com
spec:
  group: mf.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
              color: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
`

// TestNoOpWritesKeepResourceVersion: an apply or update that changes
// nothing, made a second or more later (managed fields' times have
// seconds), stores nothing: the resourceVersion and the manager's time
// stay, as in kube (which reverts the new time after comparing the
// objects; here the managed fields keep a manager's time while its fields
// do not change, so there is nothing to compare).
func TestNoOpWritesKeepResourceVersion(t *testing.T) {
	e := e2eutil.Start(t)
	c := e.Clientset
	ns := e.Namespace(t)
	ac := corev1ac.ConfigMap("noop", ns).WithData(map[string]string{"a": "1"})
	applied, err := c.CoreV1().ConfigMaps(ns).Apply(e2eutil.Ctx(t), ac, metav1.ApplyOptions{FieldManager: "applier"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the clock to reach the next second: a time set now would
	// differ from the first one.
	time.Sleep(time.Until(applied.ManagedFields[0].Time.Add(time.Second + 50*time.Millisecond)))
	again, err := c.CoreV1().ConfigMaps(ns).Apply(e2eutil.Ctx(t), ac, metav1.ApplyOptions{FieldManager: "applier"})
	if err != nil {
		t.Fatal(err)
	}
	updated, err := c.CoreV1().ConfigMaps(ns).Update(e2eutil.Ctx(t), again, metav1.UpdateOptions{FieldManager: "applier"})
	if err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string]*corev1.ConfigMap{"the second apply": again, "the update": updated} {
		if got.ResourceVersion != applied.ResourceVersion || !got.ManagedFields[0].Time.Equal(applied.ManagedFields[0].Time) {
			t.Errorf("%s: resourceVersion %s, time %v; want %s, %v as after the first apply", what,
				got.ResourceVersion, got.ManagedFields[0].Time, applied.ResourceVersion, applied.ManagedFields[0].Time)
		}
	}
	// A write that changes the object does move both.
	again.Data["a"] = "2"
	changed, err := c.CoreV1().ConfigMaps(ns).Update(e2eutil.Ctx(t), again, metav1.UpdateOptions{FieldManager: "applier"})
	if err != nil {
		t.Fatal(err)
	}
	if changed.ResourceVersion == applied.ResourceVersion {
		t.Errorf("a changing update kept the resourceVersion %s", changed.ResourceVersion)
	}
}
