package openapi_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/openapi"
	"github.com/capstan-io/capstan/openapi/generated"
)

// The containers of a pod are a map keyed by name, as kube's schema says:
// two appliers can own different containers.
func TestTypeConverterKnowsListMapKeys(t *testing.T) {
	tc := openapi.TypeConverter(openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions))
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "x"}, {Name: "b", Image: "y"}}},
	}
	tv, err := tc.ObjectToTyped(pod)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		t.Fatal(err)
	}
	want := `.spec.containers[name="a"].image`
	found := false
	set.Iterate(func(p fieldpath.Path) {
		if p.String() == want {
			found = true
		}
	})
	if !found {
		t.Fatalf("field set lacks %s:\n%s", want, set.String())
	}
}

func BenchmarkTypeConverterBuild(b *testing.B) {
	catalog := openapi.NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions)
	catalog.Definitions(openapi.V3)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := openapi.TypeConverter(catalog).Warm(); err != nil {
			b.Fatal(err)
		}
	}
}
