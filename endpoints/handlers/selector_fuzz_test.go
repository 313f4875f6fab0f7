package handlers

import (
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/registry"
)

// FuzzSelectors: the label and field selectors of a list or watch either
// parse or are refused with a 400, never a panic; a parsed selector
// prints to one that parses back to the same selector and selects the
// same objects, since the watch cache and authorizers re-read the printed
// form.
func FuzzSelectors(f *testing.F) {
	for _, seed := range [][2]string{
		{"app=web,tier!=db", "metadata.name=p,spec.nodeName!=n"},
		{"env in (a,b),!gone,has", "status.phase==Running"},
		{"a notin (),b", "metadata.namespace=ns,"},
		{"x>1,y<2", `metadata.name=a\,b`},
		{"app=\u00e9", "spec.unknown=x"},
		{"a=(b", `metadata.name=\`},
		{"example.com/name=v-1.2_3", "metadata.name=="},
	} {
		f.Add(seed[0], seed[1])
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"app": "web", "env": "a", "x": "3"}},
		Spec:       corev1.PodSpec{NodeName: "n"},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	podFields := registry.ObjectMetaFields(pod, true)
	maps.Copy(podFields, core.PodStrategy{}.Fields(pod))
	s := &Scope{SupportedFields: podFields}
	podLabels := labels.Set(pod.Labels)
	f.Fuzz(func(t *testing.T, labelText, fieldText string) {
		if sel, err := labelSelector(labelText); err != nil {
			mustBeBadRequest(t, err)
		} else {
			again, err := labels.Parse(sel.String())
			if err != nil {
				t.Fatalf("label selector %q prints as %q, which does not parse: %v", labelText, sel.String(), err)
			}
			if again.String() != sel.String() || again.Matches(podLabels) != sel.Matches(podLabels) {
				t.Fatalf("label selector %q: %q reparses as %q", labelText, sel.String(), again.String())
			}
		}
		sel, err := s.fieldSelector(fieldText)
		if err != nil {
			mustBeBadRequest(t, err)
			return
		}
		again, err := fields.ParseSelector(sel.String())
		if err != nil {
			t.Fatalf("field selector %q prints as %q, which does not parse: %v", fieldText, sel.String(), err)
		}
		if again.String() != sel.String() || again.Matches(podFields) != sel.Matches(podFields) {
			t.Fatalf("field selector %q: %q reparses as %q", fieldText, sel.String(), again.String())
		}
	})
}

func mustBeBadRequest(t *testing.T, err error) {
	t.Helper()
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("error %v is not a 400", err)
	}
}
