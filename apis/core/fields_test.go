package core

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/capstan-io/capstan/registry"
)

// TestFieldsKeys pins the field selectors of each resource to kube's
// (metadata.name and metadata.namespace are the Store's).
func TestFieldsKeys(t *testing.T) {
	tests := []struct {
		name     string
		strategy registry.FieldSelectable
		obj      runtime.Object
		want     []string
	}{
		{"namespaces", NamespaceStrategy{}, &corev1.Namespace{}, []string{"status.phase"}},
		{"namespaces/status", NamespaceStatusStrategy{}, &corev1.Namespace{}, []string{"status.phase"}},
		{"secrets", SecretStrategy{}, &corev1.Secret{}, []string{"type"}},
		{"events", EventStrategy{}, &corev1.Event{}, []string{
			"involvedObject.apiVersion", "involvedObject.fieldPath", "involvedObject.kind", "involvedObject.name",
			"involvedObject.namespace", "involvedObject.resourceVersion", "involvedObject.uid",
			"reason", "reportingComponent", "source", "type",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keys(tt.strategy.Fields(tt.obj)); !slices.Equal(got, tt.want) {
				t.Errorf("keys = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFieldsValues(t *testing.T) {
	ns := &corev1.Namespace{Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}
	if got := (NamespaceStrategy{}).Fields(ns)["status.phase"]; got != "Terminating" {
		t.Errorf("status.phase = %q", got)
	}
	if got := (SecretStrategy{}).Fields(&corev1.Secret{Type: corev1.SecretTypeTLS})["type"]; got != "kubernetes.io/tls" {
		t.Errorf("type = %q", got)
	}
	ev := &corev1.Event{ReportingController: "ctrl", InvolvedObject: corev1.ObjectReference{UID: "u"}}
	set := EventStrategy{}.Fields(ev)
	if set["source"] != "ctrl" || set["reportingComponent"] != "ctrl" || set["involvedObject.uid"] != "u" {
		t.Errorf("event fields = %v", set)
	}
	ev.Source.Component = "kubelet"
	if got := (EventStrategy{}).Fields(ev)["source"]; got != "kubelet" {
		t.Errorf("source = %q, want the source component first", got)
	}
}

func keys(set fields.Set) []string {
	var ks []string
	for k := range set {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
