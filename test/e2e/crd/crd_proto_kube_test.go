package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// kubeEtcd is what kube-apiserver v1.37.2 stored for a few objects,
// recorded by:
//
//	bench/record-kube-etcd.sh > test/e2e/crd/testdata/kube-etcd.txt
const kubeEtcd = "testdata/kube-etcd.txt"

// The recorded objects' keys.
const (
	kubeWidgetsCRD = "/registry/apiextensions.k8s.io/customresourcedefinitions/widgets.kubeform.example.com"
	kubeGadgetsCRD = "/registry/apiextensions.k8s.io/customresourcedefinitions/gadgets.kubeform.example.com"
	kubeW1         = "/registry/kubeform.example.com/widgets/kubeform/w1"
	kubeW2         = "/registry/kubeform.example.com/widgets/kubeform/w2"
	kubeG1         = "/registry/kubeform.example.com/gadgets/g1"
	kubeConfigMap  = "/registry/configmaps/kubeform/settings"
	kubeSecret     = "/registry/secrets/kubeform/token"
	kubeNamespace  = "/registry/namespaces/kubeform"
)

var (
	widgetsV1      = schema.GroupVersionResource{Group: "kubeform.example.com", Version: "v1", Resource: "widgets"}
	widgetsV1beta1 = schema.GroupVersionResource{Group: "kubeform.example.com", Version: "v1beta1", Resource: "widgets"}
	gadgetsV1      = schema.GroupVersionResource{Group: "kubeform.example.com", Version: "v1", Resource: "gadgets"}
)

// readKubeEtcd reads the recorded keys and values.
func readKubeEtcd(t *testing.T) map[string][]byte {
	t.Helper()
	f, err := os.Open(kubeEtcd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kvs := map[string][]byte{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, b64, ok := strings.Cut(line, " ")
		value, err := base64.StdEncoding.DecodeString(b64)
		if !ok || err != nil {
			t.Fatalf("%s: bad line %.80q: %v", kubeEtcd, line, err)
		}
		kvs[key] = value
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{kubeWidgetsCRD, kubeGadgetsCRD, kubeW1, kubeW2, kubeG1, kubeConfigMap, kubeSecret, kubeNamespace,
		kubeTrustBundle, kubeMigration, kubeTaintRule, kubePCR, kubeLegacyPCR} {
		if kvs[key] == nil {
			t.Fatalf("%s has no %s", kubeEtcd, key)
		}
	}
	return kvs
}

// TestKubeStoredObjects: objects kube-apiserver v1.37.2 stored (CRDs,
// custom resources, a namespace, a config map, a secret, and objects of
// the kinds GA in 1.37 that kube stores at their betas) are loaded into
// capstan's etcd as kube wrote them; capstan reads, lists, watches and
// updates them through client-go in protobuf and JSON, and what it writes
// back is kube's form: the same keys, encodings, storage versions and
// fields, those of a beta that v1 lacks included.
func TestKubeStoredObjects(t *testing.T) {
	kvs := readKubeEtcd(t)
	e := e2eutil.Start(t)
	for key, value := range kvs {
		e.EtcdPut(t, key, value)
	}
	// Started again, capstan finds the objects as it would on kube's etcd.
	e.Restart(t)
	checkKubeStoredObjects(t, e.Config, kvs, func(key string) []byte { return e.EtcdValue(t, key) })
}

// checkKubeStoredObjects reads, watches and updates the objects of kvs
// through the server of cfg, then checks the values stored for them
// (read by stored) against kube's.
func checkKubeStoredObjects(t *testing.T, cfg *rest.Config, kvs map[string][]byte, stored func(key string) []byte) {
	t.Helper()
	for _, ct := range []string{e2eutil.ProtobufType, "application/json"} {
		c, _ := e2eutil.CRDClientset(t, cfg, ct)
		crds := c.ApiextensionsV1().CustomResourceDefinitions()
		e2eutil.Eventually(t, 30*time.Second, "recorded CRDs served", func(c2 context.Context) (bool, error) {
			for _, name := range []string{"widgets.kubeform.example.com", "gadgets.kubeform.example.com"} {
				crd, err := crds.Get(c2, name, metav1.GetOptions{})
				if err != nil || !e2eutil.HasCRDCondition(crd, apiextv1.Established) {
					return false, err
				}
			}
			return true, nil
		})
		list, err := crds.List(e2eutil.Ctx(t), metav1.ListOptions{})
		if err != nil || !e2eutil.ContainsCRD(list, "widgets.kubeform.example.com") || !e2eutil.ContainsCRD(list, "gadgets.kubeform.example.com") {
			t.Fatalf("%s: CRD list = %v, %v", ct, list, err)
		}
		w, err := crds.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion, FieldSelector: "metadata.name=gadgets.kubeform.example.com"})
		if err != nil {
			t.Fatalf("%s: watch: %v", ct, err)
		}
		gadgets, err := crds.Get(e2eutil.Ctx(t), "gadgets.kubeform.example.com", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		metav1.SetMetaDataLabel(&gadgets.ObjectMeta, "capstan-"+contentTypeName(ct), "updated")
		if _, err := crds.Update(e2eutil.Ctx(t), gadgets, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s: update: %v", ct, err)
		}
		wantWatchEvent(t, w, watch.Modified, func(crd *apiextv1.CustomResourceDefinition) bool {
			return crd.Labels["capstan-"+contentTypeName(ct)] == "updated"
		})
		w.Stop()

		pcfg := rest.CopyConfig(cfg)
		pcfg.ContentType, pcfg.AcceptContentTypes = ct, ct
		core, err := kubernetes.NewForConfig(pcfg)
		if err != nil {
			t.Fatal(err)
		}
		updateBuiltins(t, core, contentTypeName(ct))
		updateGA137(t, core, contentTypeName(ct))
		if ct == e2eutil.ProtobufType {
			denyLegacyPCR(t, core)
		}
	}
	updateKubeCustomResources(t, cfg)
	wantKubeForm(t, kvs, stored)
	wantLegacyPCRKept(t, kvs[kubeLegacyPCR], stored(kubeLegacyPCR))
}

func contentTypeName(ct string) string {
	if ct == e2eutil.ProtobufType {
		return "protobuf"
	}
	return "json"
}

// updateBuiltins labels the recorded config map and secret.
func updateBuiltins(t *testing.T, c kubernetes.Interface, label string) {
	t.Helper()
	cm, err := c.CoreV1().ConfigMaps("kubeform").Get(e2eutil.Ctx(t), "settings", metav1.GetOptions{})
	if err != nil || cm.Data["mode"] != "kube" {
		t.Fatalf("config map = %v, %v", cm, err)
	}
	metav1.SetMetaDataLabel(&cm.ObjectMeta, "capstan-"+label, "updated")
	if _, err := c.CoreV1().ConfigMaps("kubeform").Update(e2eutil.Ctx(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("config map update: %v", err)
	}
	s, err := c.CoreV1().Secrets("kubeform").Get(e2eutil.Ctx(t), "token", metav1.GetOptions{})
	if err != nil || string(s.Data["token"]) != "kube" {
		t.Fatalf("secret = %v, %v", s, err)
	}
	metav1.SetMetaDataLabel(&s.ObjectMeta, "capstan-"+label, "updated")
	if _, err := c.CoreV1().Secrets("kubeform").Update(e2eutil.Ctx(t), s, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("secret update: %v", err)
	}
	if ns, err := c.CoreV1().Namespaces().Get(e2eutil.Ctx(t), "kubeform", metav1.GetOptions{}); err != nil || ns.Status.Phase != corev1.NamespaceActive {
		t.Fatalf("namespace = %v, %v", ns, err)
	}
}

// updateKubeCustomResources reads the recorded custom resources at each
// served version, watches them and updates them, their status included.
func updateKubeCustomResources(t *testing.T, cfg *rest.Config) {
	t.Helper()
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	widgets := d.Resource(widgetsV1).Namespace("kubeform")
	list, err := widgets.List(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil || itemNames(list) != "w1,w2" {
		t.Fatalf("widgets = %v, %v", list, err)
	}
	w2, err := d.Resource(widgetsV1beta1).Namespace("kubeform").Get(e2eutil.Ctx(t), "w2", metav1.GetOptions{})
	if err != nil || w2.GetAPIVersion() != "kubeform.example.com/v1beta1" {
		t.Fatalf("w2 at v1beta1 = %v, %v", w2, err)
	}
	w, err := widgets.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	w1, err := widgets.Get(e2eutil.Ctx(t), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(w1.Object, "status", "phase"); phase != "Ready" {
		t.Fatalf("w1 status = %v", w1.Object["status"])
	}
	labelAndUpdate(t, widgets, w1)
	w1, err = widgets.Get(e2eutil.Ctx(t), "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(w1.Object, "Serving", "status", "phase"); err != nil {
		t.Fatal(err)
	}
	if _, err := widgets.UpdateStatus(e2eutil.Ctx(t), w1, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("w1 status update: %v", err)
	}
	deadline := time.After(30 * time.Second)
	for seen := false; !seen; {
		select {
		case ev := <-w.ResultChan():
			u, _ := ev.Object.(*unstructured.Unstructured)
			phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
			seen = ev.Type == watch.Modified && u.GetName() == "w1" && phase == "Serving"
		case <-deadline:
			t.Fatal("no watch event of w1's status update")
		}
	}
	labelAndUpdate(t, d.Resource(widgetsV1beta1).Namespace("kubeform"), w2)
	g1, err := d.Resource(gadgetsV1).Get(e2eutil.Ctx(t), "g1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	labelAndUpdate(t, d.Resource(gadgetsV1), g1)
}

func labelAndUpdate(t *testing.T, r dynamic.ResourceInterface, u *unstructured.Unstructured) {
	t.Helper()
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels["capstan"] = "updated"
	u.SetLabels(labels)
	if _, err := r.Update(e2eutil.Ctx(t), u, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating %s: %v", u.GetName(), err)
	}
}

// wantKubeForm checks the values stored for kube's keys after capstan's
// updates: built-in objects in the protobuf envelope at kube's storage
// version, CRDs as JSON at v1beta1 and custom resources as JSON at the
// CRD's storage version, each with kube's fields.
func wantKubeForm(t *testing.T, kvs map[string][]byte, stored func(key string) []byte) {
	t.Helper()
	for key, kube := range kvs {
		got := stored(key)
		if got == nil {
			t.Errorf("%s: gone", key)
			continue
		}
		if bytes.HasPrefix(kube, []byte("k8s\x00")) != bytes.HasPrefix(got, []byte("k8s\x00")) {
			t.Errorf("%s: stored as %.20q, kube stored %.20q", key, got, kube)
			continue
		}
		switch {
		case bytes.HasPrefix(kube, []byte("k8s\x00")):
			wantSameEnvelope(t, key, kube, got)
		case strings.Contains(key, "/customresourcedefinitions/"):
			wantSameCRD(t, key, kube, got)
		default:
			wantSameJSON(t, key, kube, got)
		}
	}
}

// wantSameEnvelope compares two protobuf values: the same envelope,
// apiVersion and kind.
func wantSameEnvelope(t *testing.T, key string, kube, got []byte) {
	t.Helper()
	k, g := decodeEnvelope(t, kube), decodeEnvelope(t, got)
	if k.APIVersion != g.APIVersion || k.Kind != g.Kind || g.ContentType != "" || g.ContentEncoding != "" {
		t.Errorf("%s: stored as %s %s, kube stored %s %s", key, g.APIVersion, g.Kind, k.APIVersion, k.Kind)
	}
}

// wantSameCRD compares two stored CRDs, both in kube's form, as kube's
// types read them: the same spec, identity and stored versions.
func wantSameCRD(t *testing.T, key string, kube, got []byte) {
	t.Helper()
	name := key[strings.LastIndex(key, "/")+1:]
	kc, gc := e2eutil.WantKubeCRDValue(t, name, kube), e2eutil.WantKubeCRDValue(t, name, got)
	if !reflect.DeepEqual(kc.Spec, gc.Spec) || kc.UID != gc.UID || !kc.CreationTimestamp.Equal(&gc.CreationTimestamp) ||
		!reflect.DeepEqual(kc.Status.StoredVersions, gc.Status.StoredVersions) {
		t.Errorf("%s: capstan's CRD differs from kube's:\n kube %+v\n got  %+v", key, kc.Spec, gc.Spec)
	}
}

// wantSameJSON compares two custom resources: the same apiVersion, kind and
// content but for the metadata capstan's updates change, written in the
// same form (compact, keys sorted).
func wantSameJSON(t *testing.T, key string, kube, got []byte) {
	t.Helper()
	var k, g map[string]any
	if err := json.Unmarshal(kube, &k); err != nil {
		t.Fatalf("%s: kube's value: %v", key, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: capstan's value is not JSON: %v", key, err)
		return
	}
	if canonical, _ := json.Marshal(g); !bytes.Equal(bytes.TrimSuffix(got, []byte("\n")), canonical) ||
		bytes.HasSuffix(kube, []byte("\n")) != bytes.HasSuffix(got, []byte("\n")) {
		t.Errorf("%s: capstan's JSON is not in kube's form:\n kube %.200s\n got  %.200s", key, kube, got)
	}
	for _, m := range []map[string]any{k, g} {
		meta := m["metadata"].(map[string]any)
		for _, f := range []string{"labels", "managedFields", "generation", "resourceVersion"} {
			delete(meta, f)
		}
		delete(m, "status")
	}
	if !reflect.DeepEqual(k, g) {
		t.Errorf("%s: capstan's custom resource differs from kube's:\n kube %v\n got  %v", key, k, g)
	}
}
