package core

import (
	"context"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func nsWith(finalizers ...corev1.FinalizerName) *corev1.Namespace {
	return &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: "ns"},
		Spec:       corev1.NamespaceSpec{Finalizers: finalizers},
		Status:     corev1.NamespaceStatus{Phase: corev1.NamespaceActive},
	}
}

func TestValidateNamespace(t *testing.T) {
	tests := []struct {
		name       string
		finalizers []corev1.FinalizerName
		want       []wantErr
	}{
		{"none", nil, nil},
		{"standard", []corev1.FinalizerName{"kubernetes", "orphan", "foregroundDeletion"}, nil},
		{"qualified", []corev1.FinalizerName{"example.com/cleanup"}, nil},
		{"not standard", []corev1.FinalizerName{"cleanup"}, []wantErr{inv("spec.finalizers")}},
		{"bad prefix", []corev1.FinalizerName{"-example.com/cleanup"}, []wantErr{inv("spec.finalizers")}},
		{"two slashes", []corev1.FinalizerName{"a.com/b/c"}, []wantErr{inv("spec.finalizers")}},
		{"bad name", []corev1.FinalizerName{"example.com/-x"}, []wantErr{inv("spec.finalizers")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nsWith(tt.finalizers...)
			checkErrs(t, NamespaceStrategy{}.Validate(context.Background(), ns), tt.want...)
			checkErrs(t, NamespaceStrategy{}.ValidateUpdate(context.Background(), ns, ns), tt.want...)
		})
	}
	checkDetail(t, ValidateNamespace(nsWith("cleanup")), "name is neither a standard finalizer name nor is it fully qualified")
}

func TestValidateNamespaceFinalizeUpdate(t *testing.T) {
	errs := NamespaceFinalizeStrategy{}.ValidateUpdate(context.Background(), nsWith("kubernetes", "bad"), nsWith("kubernetes"))
	checkErrs(t, errs, inv("spec.finalizers[1]"))
	checkErrs(t, NamespaceFinalizeStrategy{}.ValidateUpdate(context.Background(), nsWith(), nsWith("kubernetes")))
}

func TestValidateNamespaceStatusUpdate(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name     string
		deleting bool
		phase    corev1.NamespacePhase
		want     []wantErr
	}{
		{"active", false, corev1.NamespaceActive, nil},
		{"terminating without deletion", false, corev1.NamespaceTerminating, []wantErr{inv("status.Phase")}},
		{"empty phase", false, "", []wantErr{inv("status.Phase")}},
		{"terminating", true, corev1.NamespaceTerminating, nil},
		{"active while deleting", true, corev1.NamespaceActive, []wantErr{inv("status.Phase")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nsWith()
			ns.Status.Phase = tt.phase
			if tt.deleting {
				ns.DeletionTimestamp = &now
			}
			checkErrs(t, NamespaceStatusStrategy{}.ValidateUpdate(context.Background(), ns, nsWith()), tt.want...)
		})
	}
}

func TestNamespacePrepareForCreate(t *testing.T) {
	tests := []struct {
		name string
		in   []corev1.FinalizerName
		want []corev1.FinalizerName
	}{
		{"none", nil, []corev1.FinalizerName{"kubernetes"}},
		{"kept", []corev1.FinalizerName{"kubernetes"}, []corev1.FinalizerName{"kubernetes"}},
		{"appended", []corev1.FinalizerName{"example.com/x"}, []corev1.FinalizerName{"example.com/x", "kubernetes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := nsWith(tt.in...)
			ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating, Conditions: []corev1.NamespaceCondition{{Type: "X"}}}
			NamespaceStrategy{}.PrepareForCreate(context.Background(), ns)
			if !reflect.DeepEqual(ns.Spec.Finalizers, tt.want) {
				t.Errorf("finalizers = %v, want %v", ns.Spec.Finalizers, tt.want)
			}
			if !reflect.DeepEqual(ns.Status, corev1.NamespaceStatus{Phase: corev1.NamespaceActive}) {
				t.Errorf("status = %+v, want Active only", ns.Status)
			}
		})
	}
}

func TestNamespacePrepareForUpdate(t *testing.T) {
	old := nsWith("kubernetes")
	old.Status.Phase = corev1.NamespaceTerminating

	main := nsWith("example.com/x")
	main.Labels = map[string]string{"a": "b"}
	NamespaceStrategy{}.PrepareForUpdate(context.Background(), main, old)
	if !reflect.DeepEqual(main.Spec, old.Spec) || !reflect.DeepEqual(main.Status, old.Status) || main.Labels["a"] != "b" {
		t.Errorf("main update = %+v", main)
	}

	status := nsWith("example.com/x")
	status.Status.Phase = corev1.NamespaceTerminating
	NamespaceStatusStrategy{}.PrepareForUpdate(context.Background(), status, old)
	if !reflect.DeepEqual(status.Spec, old.Spec) || status.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("status update = %+v", status)
	}

	finalize := nsWith()
	finalize.Status.Phase = corev1.NamespaceActive
	NamespaceFinalizeStrategy{}.PrepareForUpdate(context.Background(), finalize, old)
	if len(finalize.Spec.Finalizers) != 0 || !reflect.DeepEqual(finalize.Status, old.Status) {
		t.Errorf("finalize update = %+v", finalize)
	}
}

func TestNamespaceDefault(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	NamespaceStrategy{}.Default(ns)
	if ns.Labels[corev1.LabelMetadataName] != "team" || ns.Status.Phase != corev1.NamespaceActive {
		t.Errorf("defaulted = %+v", ns)
	}

	generated := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "team-"}}
	NamespaceStrategy{}.Default(generated)
	if generated.Labels != nil {
		t.Errorf("label set before the name is known: %v", generated.Labels)
	}
	generated.Name = "team-x1"
	NamespaceStrategy{}.Canonicalize(generated)
	if generated.Labels[corev1.LabelMetadataName] != "team-x1" {
		t.Errorf("canonicalized labels = %v", generated.Labels)
	}
}

func TestNamespaceValidateName(t *testing.T) {
	tests := []struct {
		name   string
		prefix bool
		ok     bool
	}{
		{"team-a", false, true},
		{"team.a", false, false},
		{"Team", false, false},
		{"team-", true, true},
		{"team-", false, false},
	}
	for _, tt := range tests {
		if msgs := (NamespaceStrategy{}).ValidateName(tt.name, tt.prefix); (len(msgs) == 0) != tt.ok {
			t.Errorf("ValidateName(%q, %v) = %v, want ok=%v", tt.name, tt.prefix, msgs, tt.ok)
		}
	}
}

func TestNamespaceDeleting(t *testing.T) {
	now := metav1.Now()
	tests := []struct {
		name string
		ns   corev1.Namespace
		want bool
	}{
		{"active", corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceActive}}, false},
		{"deletion requested", corev1.Namespace{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now}}, true},
		{"terminating", corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}, true},
	}
	for _, tt := range tests {
		if got := NamespaceDeleting(&tt.ns); got != tt.want {
			t.Errorf("%s: NamespaceDeleting = %v, want %v", tt.name, got, tt.want)
		}
	}
}
