package priority

import (
	"context"
	"testing"

	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/admission"
)

func TestOnlyOneGlobalDefault(t *testing.T) {
	existing := []schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 1},
		{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Value: 10, GlobalDefault: true},
	}
	p := New(func(context.Context) ([]schedulingv1.PriorityClass, error) { return existing, nil })
	attrs := func(op admission.Operation, name string, def bool) *admission.Attributes {
		return &admission.Attributes{Operation: op, Name: name,
			Resource: schedulingv1.SchemeGroupVersion.WithResource("priorityclasses"),
			Object:   &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, GlobalDefault: def}}
	}
	tests := []struct {
		name      string
		a         *admission.Attributes
		forbidden bool
	}{
		{"create non-default", attrs(admission.Create, "x", false), false},
		{"create second default", attrs(admission.Create, "x", true), true},
		{"make another the default", attrs(admission.Update, "low", true), true},
		{"update the default", attrs(admission.Update, "default", true), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := p.Validate(context.Background(), tt.a)
			if apierrors.IsForbidden(err) != tt.forbidden || (!tt.forbidden && err != nil) {
				t.Errorf("Validate = %v, forbidden want %v", err, tt.forbidden)
			}
		})
	}
	if !p.Handles(admission.Create) || p.Handles(admission.Delete) {
		t.Error("Handles")
	}
}
