package admplugins

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodDefaultsMatchKube: the pods of testdata/kube-pod-defaults/input.json,
// created in a fresh namespace with the default admission plugins, are
// stored as kube-apiserver v1.37.2 stored them (kube.json, recorded by
// hack/update-kube-pod-defaults.sh): service account and its token
// volume and mounts, pull secrets, tolerations, priority, enable service
// links, scheduler, QoS class and the rest, but for the values each server
// generates.
func TestPodDefaultsMatchKube(t *testing.T) {
	var input struct {
		ServiceAccounts []json.RawMessage `json:"serviceAccounts"`
		Pods            []json.RawMessage `json:"pods"`
	}
	readJSON(t, "testdata/kube-pod-defaults/input.json", &input)
	var kube []map[string]any
	readJSON(t, "testdata/kube-pod-defaults/kube.json", &kube)
	if len(kube) != len(input.Pods) {
		t.Fatalf("kube.json has %d pods, input.json %d: record again", len(kube), len(input.Pods))
	}

	e := e2eutil.Start(t)
	const ns = "pod-defaults"
	annotatedNamespace(t, e, ns, nil)
	rest := e.Clientset.CoreV1().RESTClient()
	// capstan's serviceaccount loop makes "default", as kube's
	// controller-manager would; the recording made it by hand.
	e2eutil.Eventually(t, 30*time.Second, "default service account", func(c context.Context) (bool, error) {
		_, err := e.Clientset.CoreV1().ServiceAccounts(ns).Get(c, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	for _, sa := range input.ServiceAccounts {
		err := rest.Post().Namespace(ns).Resource("serviceaccounts").Body([]byte(sa)).Do(e2eutil.Ctx(t)).Error()
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for i, pod := range input.Pods {
		raw, err := rest.Post().Namespace(ns).Resource("pods").Body([]byte(pod)).Do(e2eutil.Ctx(t)).Raw()
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		want := kube[i]
		normalisePod(got)
		normalisePod(want)
		if !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", "  ")
			w, _ := json.MarshalIndent(want, "", "  ")
			t.Errorf("pod %d differs from kube's\ncapstan: %s\nkube: %s", i, g, w)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// normalisePod drops what each server generates: uid, resourceVersion,
// creation time, managed fields (their times), and the random suffix of
// the token volume's name.
func normalisePod(pod map[string]any) {
	meta, _ := pod["metadata"].(map[string]any)
	for _, k := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
		delete(meta, k)
	}
	spec, _ := pod["spec"].(map[string]any)
	tokenName := func(m any) {
		if v, ok := m.(map[string]any); ok {
			if n, _ := v["name"].(string); strings.HasPrefix(n, "kube-api-access-") {
				v["name"] = "kube-api-access-*"
			}
		}
	}
	vols, _ := spec["volumes"].([]any)
	for _, v := range vols {
		tokenName(v)
	}
	for _, key := range []string{"initContainers", "containers"} {
		cs, _ := spec[key].([]any)
		for _, c := range cs {
			mounts, _ := c.(map[string]any)["volumeMounts"].([]any)
			for _, m := range mounts {
				tokenName(m)
			}
		}
	}
}
