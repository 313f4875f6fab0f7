package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/capstan-io/capstan/internal/testkit"
)

// roundtripNamespace holds every namespaced object of TestRoundtripEveryResource.
const roundtripNamespace = "roundtrip"

// TestRoundtripEveryResource drives each resource of the built-in catalog
// through create, get, list, watch, update, merge patch, its status and scale
// subresources and delete, once over JSON and once over protobuf, and checks
// the object the server defaulted against kube's defaults for the type.
func TestRoundtripEveryResource(t *testing.T) {
	cfg := catalogServer(t)
	wires := []wire{jsonWire(t, cfg), protobufWire(cfg)}
	for _, r := range roundtripTable(t) {
		for i, w := range wires {
			t.Run(r.gvr.Resource+"."+r.gvr.Version+"/"+w.name(), func(t *testing.T) {
				roundtrip(t, w, r, i+1)
			})
		}
	}
}

// catalogServer starts capstan and returns its admin config, or, with
// $CATALOG_UPSTREAM_KUBECONFIG set, the config of that server instead, which
// lets the tables be checked against kube-apiserver itself
// (bench/upstream/run.sh). Either way the roundtrip namespace exists.
func catalogServer(t *testing.T) *rest.Config {
	t.Helper()
	var cfg *rest.Config
	if path := os.Getenv("CATALOG_UPSTREAM_KUBECONFIG"); path != "" {
		var err error
		if cfg, err = clientcmd.BuildConfigFromFlags("", path); err != nil {
			t.Fatal(err)
		}
	} else {
		// Without the resourcequota and validatingadmissionpolicy-status
		// loops, as kube-apiserver alone: they would write a new quota's or
		// policy's status between the test's create and its read.
		cfg = rest.CopyConfig(testkit.StartServer(t, "--controllers=*,-resourcequota,-validatingadmissionpolicy-status-controller").Config)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side throttling: the tests make many requests
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: roundtripNamespace}}
	if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// kube's ServiceAccount admission wants the namespace's default account,
	// which no controller makes without a controller manager.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := c.CoreV1().ServiceAccounts(roundtripNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return cfg
}

// resourceCase is one row of the roundtrip table.
type resourceCase struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
	// name overrides the object's name; {{n}} in it, as in manifest, is the
	// wire's number, so that the two wires' objects differ.
	name string
	// manifest is the minimal YAML body (without apiVersion, kind and metadata.name).
	manifest string
	// defaults are the fields kube's defaulting and strategy give the object
	// on create: a JSON path -> the value as JSON would show it.
	defaults map[string]any
	// patch is a JSON merge patch; patched what it leaves at which path.
	patch   string
	patched map[string]any
	status  bool
	scale   bool
	// more are the other subresources that serve the object for GET and PUT.
	more []string
}

func (r resourceCase) object(t *testing.T, n int) *unstructured.Unstructured {
	t.Helper()
	manifest := strings.ReplaceAll(r.manifest, "{{n}}", strconv.Itoa(n))
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("manifest of %s: %v", r.gvr.Resource, err)
	}
	if u.Object == nil {
		u.Object = map[string]any{}
	}
	u.SetAPIVersion(r.gvr.GroupVersion().String())
	u.SetKind(r.kind)
	name := "rt-" + strconv.Itoa(n)
	if r.name != "" {
		name = strings.ReplaceAll(r.name, "{{n}}", strconv.Itoa(n))
	}
	u.SetName(name)
	if r.namespaced {
		u.SetNamespace(roundtripNamespace)
	}
	return u
}

func roundtrip(t *testing.T, w wire, r resourceCase, n int) {
	obj := r.object(t, n)
	name, ns := obj.GetName(), obj.GetNamespace()
	at := target{gvr: r.gvr, namespace: ns, name: name}

	created, err := w.create(at, obj)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.GetName() != name || created.GetUID() == "" || created.GetResourceVersion() == "" {
		t.Fatalf("create returned %s uid %q rv %q", created.GetName(), created.GetUID(), created.GetResourceVersion())
	}
	checkPaths(t, "created", created, r.defaults)

	got, err := w.get(at, "")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatalf("get rv %s, created %s", got.GetResourceVersion(), created.GetResourceVersion())
	}
	checkPaths(t, "got", got, r.defaults)

	items, listRV, err := w.list(at)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if !containsName(items, name) {
		t.Fatalf("list at rv %s lacks %s", listRV, name)
	}

	watchCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	events, err := w.watch(watchCtx, at, listRV)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	defer events.Stop()

	labels := got.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["roundtrip"] = "updated"
	got.SetLabels(labels)
	updated, err := w.update(at, got, "")
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	if updated.GetLabels()["roundtrip"] != "updated" || updated.GetResourceVersion() == got.GetResourceVersion() {
		t.Fatalf("update: labels %v rv %s", updated.GetLabels(), updated.GetResourceVersion())
	}
	checkPaths(t, "updated", updated, r.defaults)
	waitModified(t, events, name, updated.GetResourceVersion())

	patch, patched := r.patch, r.patched
	if patch == "" {
		patch, patched = `{"metadata":{"annotations":{"roundtrip":"patched"}}}`, map[string]any{"metadata.annotations.roundtrip": "patched"}
	}
	afterPatch, err := w.patch(at, []byte(patch))
	if err != nil {
		t.Fatalf("merge patch %s: %v", patch, err)
	}
	checkPaths(t, "patched", afterPatch, patched)
	if afterPatch.GetLabels()["roundtrip"] != "updated" {
		t.Fatalf("merge patch lost the update's label: %v", afterPatch.GetLabels())
	}

	if r.status {
		roundtripStatus(t, w, at, "status")
	}
	for _, sub := range r.more {
		roundtripStatus(t, w, at, sub)
	}
	if r.scale {
		roundtripScale(t, w, at)
	}

	if err := w.delete(at); err != nil {
		t.Fatalf("delete: %v", err)
	}
	left, err := w.get(at, "")
	if err == nil && len(left.GetFinalizers()) > 0 && left.GetDeletionTimestamp() != nil {
		// A protection finalizer (pv, pvc, servicecidr) holds the object until
		// its controller lets go; none runs here, so let go of it ourselves.
		if _, err := w.patch(at, []byte(`{"metadata":{"finalizers":null}}`)); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("dropping finalizers %v: %v", left.GetFinalizers(), err)
		}
		_, err = w.get(at, "")
	}
	if !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

// roundtripStatus reads a subresource that serves the whole object (status,
// approval, ephemeralcontainers) and writes it back.
func roundtripStatus(t *testing.T, w wire, at target, sub string) {
	t.Helper()
	st, err := w.get(at, sub)
	if err != nil {
		t.Fatalf("get %s: %v", sub, err)
	}
	if st.GetName() != at.name {
		t.Fatalf("get %s returned %s", sub, st.GetName())
	}
	back, err := w.update(at, st, sub)
	if err != nil {
		t.Fatalf("put %s: %v", sub, err)
	}
	if back.GetName() != at.name || back.GetUID() != st.GetUID() {
		t.Fatalf("put %s returned %s uid %s", sub, back.GetName(), back.GetUID())
	}
}

// roundtripScale reads the scale subresource, sets 3 replicas through it and
// reads them back from the object.
func roundtripScale(t *testing.T, w wire, at target) {
	t.Helper()
	sc, err := w.get(at, "scale")
	if err != nil {
		t.Fatalf("get scale: %v", err)
	}
	if sc.GetKind() != "Scale" || sc.GetName() != at.name {
		t.Fatalf("get scale: %s %s", sc.GetKind(), sc.GetName())
	}
	if replicas, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas"); replicas != 1 {
		t.Fatalf("scale spec.replicas = %d, want 1", replicas)
	}
	if err := unstructured.SetNestedField(sc.Object, int64(3), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	out, err := w.update(at, sc, "scale")
	if err != nil {
		t.Fatalf("put scale: %v", err)
	}
	if replicas, _, _ := unstructured.NestedInt64(out.Object, "spec", "replicas"); replicas != 3 {
		t.Fatalf("put scale returned spec.replicas %d", replicas)
	}
	obj, err := w.get(at, "")
	if err != nil {
		t.Fatal(err)
	}
	checkPaths(t, "scaled", obj, map[string]any{"spec.replicas": 3})
}

func waitModified(t *testing.T, w watch.Interface, name, rv string) {
	t.Helper()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			t.Fatalf("watch error: %v", apierrors.FromObject(ev.Object))
		}
		m, err := metaOf(ev.Object)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == watch.Modified && m.GetName() == name && m.GetResourceVersion() == rv {
			return
		}
	}
	t.Fatalf("watch ended before MODIFIED %s at rv %s", name, rv)
}

func metaOf(obj runtime.Object) (metav1.Object, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u, nil
	}
	u, err := toUnstructured(obj)
	return u, err
}

func containsName(items []unstructured.Unstructured, name string) bool {
	for _, it := range items {
		if it.GetName() == name {
			return true
		}
	}
	return false
}

var pathStep = regexp.MustCompile(`^([^\[]+)((?:\[\d+\])*)$`)

// lookup finds a dotted path such as spec.containers[0].imagePullPolicy.
func lookup(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, step := range strings.Split(path, ".") {
		m := pathStep.FindStringSubmatch(step)
		if m == nil {
			return nil, false
		}
		fields, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = fields[m[1]]; !ok {
			return nil, false
		}
		for _, idx := range regexp.MustCompile(`\d+`).FindAllString(m[2], -1) {
			i, _ := strconv.Atoi(idx)
			list, ok := cur.([]any)
			if !ok || i >= len(list) {
				return nil, false
			}
			cur = list[i]
		}
	}
	return cur, true
}

// checkPaths compares each path's value with want, both as JSON.
func checkPaths(t *testing.T, what string, u *unstructured.Unstructured, want map[string]any) {
	t.Helper()
	for path, w := range want {
		got, ok := lookup(u.Object, path)
		if !ok {
			t.Errorf("%s: %s missing, want %v", what, path, w)
			continue
		}
		gotJSON, _ := json.Marshal(got)
		wantJSON, _ := json.Marshal(w)
		if string(gotJSON) != string(wantJSON) {
			t.Errorf("%s: %s = %s, want %s", what, path, gotJSON, wantJSON)
		}
	}
}

// background deletes at once: the orphan finalizer that core/v1 and batch/v1
// default to would keep the object until the garbage collector runs.
var background = metav1.DeletePropagationBackground

// target is where an object lives.
type target struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

func (at target) collection() string {
	prefix := "/apis/" + at.gvr.Group + "/" + at.gvr.Version
	if at.gvr.Group == "" {
		prefix = "/api/" + at.gvr.Version
	}
	if at.namespace != "" {
		prefix += "/namespaces/" + at.namespace
	}
	return prefix + "/" + at.gvr.Resource
}

// wire is one way to speak to the server: JSON through the dynamic client or
// protobuf through a REST client decoding into client-go's types. Both hand
// back unstructured objects so that one set of checks serves both.
type wire interface {
	name() string
	create(at target, obj *unstructured.Unstructured) (*unstructured.Unstructured, error)
	get(at target, subresource string) (*unstructured.Unstructured, error)
	list(at target) ([]unstructured.Unstructured, string, error)
	watch(ctx context.Context, at target, rv string) (watch.Interface, error)
	update(at target, obj *unstructured.Unstructured, subresource string) (*unstructured.Unstructured, error)
	patch(at target, merge []byte) (*unstructured.Unstructured, error)
	delete(at target) error
}

type dynamicWire struct{ c dynamic.Interface }

func jsonWire(t *testing.T, cfg *rest.Config) wire {
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dynamicWire{c}
}

func (dynamicWire) name() string { return "json" }

func (d dynamicWire) resource(at target) dynamic.ResourceInterface {
	if at.namespace != "" {
		return d.c.Resource(at.gvr).Namespace(at.namespace)
	}
	return d.c.Resource(at.gvr)
}

func (d dynamicWire) create(at target, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return d.resource(at).Create(ctx, obj, metav1.CreateOptions{})
}

func (d dynamicWire) get(at target, sub string) (*unstructured.Unstructured, error) {
	if sub == "" {
		return d.resource(at).Get(ctx, at.name, metav1.GetOptions{})
	}
	return d.resource(at).Get(ctx, at.name, metav1.GetOptions{}, sub)
}

func (d dynamicWire) list(at target) ([]unstructured.Unstructured, string, error) {
	l, err := d.resource(at).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	return l.Items, l.GetResourceVersion(), nil
}

func (d dynamicWire) watch(ctx context.Context, at target, rv string) (watch.Interface, error) {
	return d.resource(at).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, FieldSelector: "metadata.name=" + at.name})
}

func (d dynamicWire) update(at target, obj *unstructured.Unstructured, sub string) (*unstructured.Unstructured, error) {
	if sub == "" {
		return d.resource(at).Update(ctx, obj, metav1.UpdateOptions{})
	}
	return d.resource(at).Update(ctx, obj, metav1.UpdateOptions{}, sub)
}

func (d dynamicWire) patch(at target, merge []byte) (*unstructured.Unstructured, error) {
	return d.resource(at).Patch(ctx, at.name, types.MergePatchType, merge, metav1.PatchOptions{})
}

func (d dynamicWire) delete(at target) error {
	return d.resource(at).Delete(ctx, at.name, metav1.DeleteOptions{PropagationPolicy: &background})
}

// restWire sends and accepts protobuf; objects travel as client-go's typed
// structs and are converted to and from unstructured at the edge.
type restWire struct{ c rest.Interface }

const protobufType = "application/vnd.kubernetes.protobuf"

func protobufWire(cfg *rest.Config) wire {
	pc := rest.CopyConfig(cfg)
	pc.ContentType, pc.AcceptContentTypes = protobufType, protobufType
	pc.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	pc.GroupVersion = &schema.GroupVersion{Version: "v1"}
	pc.APIPath = "/api"
	c, err := rest.RESTClientFor(pc)
	if err != nil {
		panic(err)
	}
	return restWire{c}
}

func (restWire) name() string { return "protobuf" }

func path(at target, sub string) string {
	p := at.collection() + "/" + at.name
	if sub != "" {
		p += "/" + sub
	}
	return p
}

// typed converts an unstructured object into its client-go type.
func typed(u *unstructured.Unstructured) (runtime.Object, error) {
	obj, err := scheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	// The decoder leaves TypeMeta empty; the scheme knows the kind.
	if u.GetKind() == "" {
		if gvks, _, err := scheme.Scheme.ObjectKinds(obj); err == nil {
			u.SetGroupVersionKind(gvks[0])
		}
	}
	return u, nil
}

func (r restWire) result(res rest.Result) (*unstructured.Unstructured, error) {
	var contentType string
	res.ContentType(&contentType)
	obj, err := res.Get()
	if err != nil {
		return nil, err
	}
	if contentType != protobufType {
		return nil, fmt.Errorf("response content type %q, want protobuf", contentType)
	}
	return toUnstructured(obj)
}

func (r restWire) send(verb string, at target, sub string, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj, err := typed(u)
	if err != nil {
		return nil, err
	}
	req := r.c.Put().AbsPath(path(at, sub))
	if verb == "POST" {
		req = r.c.Post().AbsPath(at.collection())
	}
	return r.result(req.Body(obj).Do(ctx))
}

func (r restWire) create(at target, u *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return r.send("POST", at, "", u)
}

func (r restWire) get(at target, sub string) (*unstructured.Unstructured, error) {
	return r.result(r.c.Get().AbsPath(path(at, sub)).Do(ctx))
}

func (r restWire) list(at target) ([]unstructured.Unstructured, string, error) {
	l, err := r.result(r.c.Get().AbsPath(at.collection()).Do(ctx))
	if err != nil {
		return nil, "", err
	}
	var items []unstructured.Unstructured
	raw, _, _ := unstructured.NestedSlice(l.Object, "items")
	for _, it := range raw {
		items = append(items, unstructured.Unstructured{Object: it.(map[string]any)})
	}
	rv, _, _ := unstructured.NestedString(l.Object, "metadata", "resourceVersion")
	return items, rv, nil
}

func (r restWire) watch(ctx context.Context, at target, rv string) (watch.Interface, error) {
	return r.c.Get().AbsPath(at.collection()).Param("watch", "true").Param("resourceVersion", rv).
		Param("fieldSelector", "metadata.name="+at.name).Watch(ctx)
}

func (r restWire) update(at target, u *unstructured.Unstructured, sub string) (*unstructured.Unstructured, error) {
	return r.send("PUT", at, sub, u)
}

func (r restWire) patch(at target, merge []byte) (*unstructured.Unstructured, error) {
	return r.result(r.c.Patch(types.MergePatchType).AbsPath(path(at, "")).Body(merge).Do(ctx))
}

func (r restWire) delete(at target) error {
	return r.c.Delete().AbsPath(path(at, "")).Body(&metav1.DeleteOptions{PropagationPolicy: &background}).Do(ctx).Error()
}
