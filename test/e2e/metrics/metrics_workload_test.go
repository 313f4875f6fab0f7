package metrics

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// mixedWorkload is what TestMetricFamiliesMatchKube drives through both
// capstan and kube-apiserver before it compares their /metrics: every
// verb on config maps (dry run and server-side apply among them), a
// watch, a missing object, a custom resource, an access review,
// discovery and the health paths.
func mixedWorkload(t *testing.T, cfg *rest.Config) {
	t.Helper()
	c := kubernetes.NewForConfigOrDie(cfg)
	ns := e2eutil.Unique("metrics")
	if _, err := c.CoreV1().Namespaces().Create(e2eutil.Ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := c.CoreV1().ConfigMaps(ns)
	w, err := cms.Watch(e2eutil.Ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"}}, Data: map[string]string{"k": "v"}}
	must(t, func() error {
		_, err := cms.Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	})
	must(t, func() error { _, err := cms.Create(e2eutil.Ctx(t), cm, metav1.CreateOptions{}); return err })
	<-w.ResultChan()
	must(t, func() error { _, err := cms.Get(e2eutil.Ctx(t), "a", metav1.GetOptions{}); return err })
	must(t, func() error { _, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: "x=y"}); return err })
	must(t, func() error {
		_, err := cms.Patch(e2eutil.Ctx(t), "a", types.MergePatchType, []byte(`{"data":{"p":"1"}}`), metav1.PatchOptions{})
		return err
	})
	must(t, func() error {
		_, err := cms.Patch(e2eutil.Ctx(t), "a", types.ApplyPatchType, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"s":"2"}}`),
			metav1.PatchOptions{FieldManager: "metrics-test", Force: ptr.To(true)})
		return err
	})
	must(t, func() error { return cms.Delete(e2eutil.Ctx(t), "a", metav1.DeleteOptions{}) })
	if _, err := cms.Get(e2eutil.Ctx(t), "missing", metav1.GetOptions{}); err == nil {
		t.Fatal("get of a missing config map succeeded")
	}
	must(t, func() error {
		_, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(e2eutil.Ctx(t), &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"}},
		}, metav1.CreateOptions{})
		return err
	})
	customResources(t, cfg, ns)
	must(t, func() error { _, err := c.Discovery().ServerGroups(); return err })
	for _, path := range []string{"/healthz", "/livez", "/readyz", "/version"} {
		must(t, func() error {
			_, err := c.Discovery().RESTClient().Get().AbsPath(path).DoRaw(e2eutil.Ctx(t))
			return err
		})
	}
}

// customResources creates a CRD, waits until it is served, and creates,
// lists and gets one of its objects.
func customResources(t *testing.T, cfg *rest.Config, ns string) {
	t.Helper()
	group := e2eutil.Unique("metrics") + ".example.com"
	crd := &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "widgets." + group},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	dyn := dynamic.NewForConfigOrDie(cfg)
	crds := dyn.Resource(apiextv1.SchemeGroupVersion.WithResource("customresourcedefinitions"))
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	must(t, func() error { _, err := crds.Create(e2eutil.Ctx(t), u, metav1.CreateOptions{}); return err })
	widgets := dyn.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}, "spec": map[string]any{"a": int64(1)},
	}}
	err = wait.PollUntilContextTimeout(e2eutil.Ctx(t), 50*time.Millisecond, 30*time.Second, true, func(ctx2 context.Context) (bool, error) {
		_, err := widgets.Create(ctx2, obj, metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("creating a custom resource: %v", err)
	}
	must(t, func() error { _, err := widgets.List(e2eutil.Ctx(t), metav1.ListOptions{}); return err })
	must(t, func() error { _, err := widgets.Get(e2eutil.Ctx(t), "w", metav1.GetOptions{}); return err })
}

func must(t *testing.T, f func() error) {
	t.Helper()
	if err := f(); err != nil {
		t.Fatal(err)
	}
}

// family is one metric family's name, type and label names.
type family struct {
	name, typ string
	labels    []string
}

func (f family) String() string {
	return f.name + " " + f.typ + " " + strings.Join(f.labels, ",")
}

// scrapeFamilies reads /metrics through cfg.
func scrapeFamilies(t *testing.T, cfg *rest.Config) map[string]family {
	t.Helper()
	body, err := kubernetes.NewForConfigOrDie(cfg).Discovery().RESTClient().Get().AbsPath("/metrics").
		SetHeader("Accept", "text/plain").DoRaw(e2eutil.Ctx(t))
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	mfs, err := parseMetrics(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families(mfs)
}

func parseMetrics(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}

// families are the families of mfs with the label names their series use.
func families(mfs map[string]*dto.MetricFamily) map[string]family {
	out := map[string]family{}
	for name, mf := range mfs {
		var labels []string
		for _, m := range mf.Metric {
			for _, lp := range m.Label {
				if !slices.Contains(labels, lp.GetName()) {
					labels = append(labels, lp.GetName())
				}
			}
		}
		sort.Strings(labels)
		out[name] = family{name: name, typ: strings.ToLower(mf.GetType().String()), labels: labels}
	}
	return out
}

// readFamilies reads a file writeFamilies wrote.
func readFamilies(path string) (map[string]family, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]family{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, " ")
		if len(parts) != 3 {
			return nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		fam := family{name: parts[0], typ: parts[1]}
		if parts[2] != "" {
			fam.labels = strings.Split(parts[2], ",")
		}
		out[fam.name] = fam
	}
	return out, sc.Err()
}

// writeFamilies writes fams, sorted, one a line: name, type, labels.
func writeFamilies(path, header string, fams map[string]family) error {
	var lines []string
	for _, f := range fams {
		lines = append(lines, f.String())
	}
	sort.Strings(lines)
	return os.WriteFile(path, []byte(header+strings.Join(lines, "\n")+"\n"), 0o644)
}
