package apps

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/internal/fieldtest"
	"github.com/capstan-io/capstan/registry"
)

var ctx = context.Background()

// Table tests name expected errors by these short helpers.
type wantErr = fieldtest.Want

var (
	inv    = fieldtest.Invalid
	req    = fieldtest.Required
	forb   = fieldtest.Forbidden
	unsupp = fieldtest.NotSupported
	dup    = fieldtest.Duplicate
)

// checkErrs compares errors by type and path, ignoring order.
func checkErrs(t *testing.T, got field.ErrorList, want ...wantErr) {
	t.Helper()
	fieldtest.Check(t, got, want...)
}

// checkDetail requires an error at path with detail.
func checkDetail(t *testing.T, got field.ErrorList, path, detail string) {
	t.Helper()
	for _, e := range got {
		if e.Field == path && e.Detail == detail {
			return
		}
	}
	t.Errorf("no error at %s with detail %q in %v", path, detail, got)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

var appLabels = map[string]string{"app": "web"}

func selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: "ns", UID: "uid-1"}
}

// template is a valid pod template of the app=web pods, not yet defaulted.
func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyAlways,
			Containers:    []corev1.Container{{Name: "c", Image: "registry.example/web:1"}},
		},
	}
}

// defaulted applies the strategy's defaults to obj, as the Store does to a
// request body, and returns it.
func defaulted[T runtime.Object](s registry.Strategy, obj T) T {
	s.(registry.Defaulter).Default(obj)
	return obj
}
