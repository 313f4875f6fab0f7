package cache

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/storage"
)

// TestKeptAttrs: the attributes an element keeps select exactly what the
// registry's attribute function selects on its object, for resources of
// either scope, with and without labels and with fields of their own.
func TestKeptAttrs(t *testing.T) {
	pod := func(node string, phase corev1.PodPhase, ls map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-0", Labels: ls},
			Spec:       corev1.PodSpec{NodeName: node, RestartPolicy: corev1.RestartPolicyAlways},
			Status:     corev1.PodStatus{Phase: phase, PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}}},
		}
	}
	cm := func(ls map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm", Labels: ls}}
	}
	podNew := func() runtime.Object { return &corev1.Pod{} }
	cmNew := func() runtime.Object { return &corev1.ConfigMap{} }
	nsNew := func() runtime.Object { return &corev1.Namespace{} }
	labelSels := []string{"", "app=web", "app!=web", "app in (web,db)", "tier", "!tier", "app=web,tier=front", "empty=", "empty", "x"}
	fieldSels := []string{"", "metadata.name=cm", "metadata.name=web-0", "metadata.name!=cm", "metadata.namespace=ns",
		"metadata.namespace=", "metadata.namespace!=ns", "spec.nodeName=node-1", "spec.nodeName=", "status.phase=Running",
		"status.phase!=Running,spec.nodeName=node-1", "status.podIP=10.0.0.1", "spec.hostNetwork=false", "status.phase=Active"}
	for _, tc := range []struct {
		name     string
		strategy registry.Strategy
		newFunc  func() runtime.Object
		key      string
		obj      runtime.Object
	}{
		{"configmap with labels", core.ConfigMapStrategy{}, cmNew, "/configmaps/ns/cm",
			cm(map[string]string{"app": "web", "tier": "front", "empty": ""})},
		{"configmap without labels", core.ConfigMapStrategy{}, cmNew, "/configmaps/ns/cm", cm(nil)},
		{"pod on a node", core.PodStrategy{}, podNew, "/pods/ns/web-0",
			pod("node-1", corev1.PodRunning, map[string]string{"app": "web"})},
		{"pod pending", core.PodStrategy{}, podNew, "/pods/ns/web-0", pod("", corev1.PodPending, map[string]string{"app": "db", "tier": "x"})},
		{"namespace (cluster-scoped)", core.NamespaceStrategy{}, nsNew, "/namespaces/ns",
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns", Labels: map[string]string{"tier": "x"}}, Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			attrs := registry.AttrFunc(tc.strategy)
			c := &Cacher{attrs: attrs, fieldNames: fieldNamesOf(attrs, tc.newFunc)}
			e := &element{key: tc.key}
			c.keepAttrs(e, tc.obj)
			if e.attrs == "" {
				t.Fatal("no attributes kept")
			}
			wantLabels, wantFields, err := attrs(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			gotLabels, gotFields := keptOf(c, e)
			if !labels.Equals(gotLabels, wantLabels) || !labels.Equals(labels.Set(gotFields), labels.Set(wantFields)) {
				t.Errorf("kept labels %v, fields %v; want %v, %v", gotLabels, gotFields, wantLabels, wantFields)
			}
			for _, ls := range labelSels {
				for _, fs := range fieldSels {
					pred := storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything(), GetAttrs: attrs, ResourceAttrs: true}
					if pred.Label, err = labels.Parse(ls); err != nil {
						t.Fatal(err)
					}
					if pred.Field, err = fields.ParseSelector(fs); err != nil {
						t.Fatal(err)
					}
					want, err := pred.Matches(tc.obj)
					if err != nil {
						t.Fatal(err)
					}
					got, known := c.selector(pred).byAttrs(e)
					if !known || got != want {
						t.Errorf("labels %q, fields %q: kept attributes select %v (known %v), the object %v", ls, fs, got, known, want)
					}
				}
			}
		})
	}
}

// TestKeptAttrsNone: an element whose attributes cannot be read, or whose
// fields are not the resource's, keeps none, and a predicate with an
// attribute function of its own is evaluated on the objects: both read
// the object.
func TestKeptAttrsNone(t *testing.T) {
	attrs := registry.AttrFunc(core.ConfigMapStrategy{})
	c := &Cacher{attrs: attrs, fieldNames: fieldNamesOf(attrs, func() runtime.Object { return &corev1.ConfigMap{} })}
	other := &Cacher{attrs: func(runtime.Object) (labels.Set, fields.Set, error) { return nil, fields.Set{"x": ""}, nil }, fieldNames: c.fieldNames}
	for name, e := range map[string]*element{
		"unreadable":   keptBy(c, "/configmaps/ns/a", &metav1.Status{}),
		"other fields": keptBy(other, "/configmaps/ns/a", &corev1.ConfigMap{}),
	} {
		if e.attrs != "" {
			t.Errorf("%s: kept %q", name, e.attrs)
		}
		pred := storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"a": "b"}), GetAttrs: attrs, ResourceAttrs: true}
		if _, known := c.selector(pred).byAttrs(e); known {
			t.Errorf("%s: selected by attributes not kept", name)
		}
	}
	e := keptBy(c, "/configmaps/ns/a", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}})
	own := storage.SelectionPredicate{Field: fields.OneTermEqualSelector("metadata.name", "a"), GetAttrs: attrs}
	if _, known := c.selector(own).byAttrs(e); known {
		t.Error("a predicate not marked ResourceAttrs was evaluated on the kept attributes")
	}
}

func keptBy(c *Cacher, key string, obj runtime.Object) *element {
	e := &element{key: key}
	c.keepAttrs(e, obj)
	return e
}

// TestKeptLabels: kept labels answer as the labels.Set they were made
// of, whatever the lengths of keys and values, those the key holds kept
// as where it holds them.
func TestKeptLabels(t *testing.T) {
	long := strings.Repeat("k", 300)
	set := labels.Set{"a": "1", "": "empty key", "b": "", long: strings.Repeat("v", 200), "z/y.x": "é"}
	attrs := func(runtime.Object) (labels.Set, fields.Set, error) { return set, fields.Set{"f": long}, nil }
	c := &Cacher{attrs: attrs, fieldNames: []string{"f"}}
	key := "/things/é/" + long + "/" + strings.Repeat("v", 200)
	e := keptBy(c, key, &corev1.ConfigMap{})
	if len(e.attrs) > 100 {
		t.Errorf("kept %d bytes: the strings the key holds were copied", len(e.attrs))
	}
	sel := c.selector(storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"a": "1"}), ResourceAttrs: true})
	if selected, known := sel.byAttrs(e); !selected || !known {
		t.Fatalf("a=1 selects %v (known %v)", selected, known)
	}
	for _, k := range []string{"a", "", "b", long, "z/y.x", "c", "a1", long[:299], "f"} {
		v, ok := sel.labels.Lookup(k)
		want, wantOK := set[k]
		if v != want || ok != wantOK || sel.labels.Has(k) != wantOK || sel.labels.Get(k) != want {
			t.Errorf("%q: Lookup %q %v, want %q %v", k, v, ok, want, wantOK)
		}
	}
	if sel.fields.Get("f") != long || !sel.fields.Has("f") || sel.fields.Has("a") {
		t.Errorf("field f = %q", sel.fields.Get("f"))
	}
	if ls, _ := keptOf(c, keptBy(c, "/x", &corev1.ConfigMap{})); !labels.Equals(ls, set) {
		t.Errorf("labels %v, want %v", ls, set)
	}
	if ls, fs := keptOf(c, e); !labels.Equals(ls, set) || fs["f"] != long {
		t.Errorf("labels %v, fields %v; want %v, f=%s", ls, fs, set, long)
	}
}

// keptOf returns the attributes e keeps.
func keptOf(c *Cacher, e *element) (labels.Set, fields.Set) {
	ls, fs := labels.Set{}, fields.Set{}
	rest := e.attrs
	for _, name := range c.fieldNames {
		fs[name], rest = cutString(rest, e.key)
	}
	for rest != "" {
		var k string
		k, rest = cutString(rest, e.key)
		ls[k], rest = cutString(rest, e.key)
	}
	return ls, fs
}
