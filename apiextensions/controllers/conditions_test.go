package controllers

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/cert"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestSetCondition(t *testing.T) {
	then := metav1.NewTime(time.Unix(100, 0))
	now := metav1.NewTime(time.Unix(200, 0))
	cond := func(s apiextv1.ConditionStatus, reason string, at metav1.Time) apiextv1.CustomResourceDefinitionCondition {
		return apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.Established, Status: s, Reason: reason, Message: reason + " message", LastTransitionTime: at}
	}
	other := apiextv1.CustomResourceDefinitionCondition{Type: apiextv1.NamesAccepted, Status: apiextv1.ConditionTrue, LastTransitionTime: then}
	tests := []struct {
		name     string
		existing []apiextv1.CustomResourceDefinitionCondition
		set      apiextv1.CustomResourceDefinitionCondition
		want     []apiextv1.CustomResourceDefinitionCondition
	}{
		{"added", []apiextv1.CustomResourceDefinitionCondition{other},
			cond(apiextv1.ConditionTrue, "A", then),
			[]apiextv1.CustomResourceDefinitionCondition{other, cond(apiextv1.ConditionTrue, "A", now)}},
		{"same status keeps its time", []apiextv1.CustomResourceDefinitionCondition{cond(apiextv1.ConditionFalse, "A", then), other},
			cond(apiextv1.ConditionFalse, "B", metav1.Time{}),
			[]apiextv1.CustomResourceDefinitionCondition{cond(apiextv1.ConditionFalse, "B", then), other}},
		{"status change moves the time", []apiextv1.CustomResourceDefinitionCondition{cond(apiextv1.ConditionFalse, "A", then)},
			cond(apiextv1.ConditionTrue, "B", then),
			[]apiextv1.CustomResourceDefinitionCondition{cond(apiextv1.ConditionTrue, "B", now)}},
		{"missing time filled", []apiextv1.CustomResourceDefinitionCondition{cond(apiextv1.ConditionFalse, "A", metav1.Time{})},
			cond(apiextv1.ConditionFalse, "A", metav1.Time{}),
			[]apiextv1.CustomResourceDefinitionCondition{cond(apiextv1.ConditionFalse, "A", now)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crd := testCRD("foos")
			crd.Status.Conditions = tt.existing
			setCondition(crd, tt.set, now)
			if !slices.EqualFunc(crd.Status.Conditions, tt.want, func(a, b apiextv1.CustomResourceDefinitionCondition) bool {
				return sameCondition(&a, &b) && a.LastTransitionTime.Equal(&b.LastTransitionTime)
			}) {
				t.Errorf("conditions = %+v, want %+v", crd.Status.Conditions, tt.want)
			}
		})
	}
}

func TestRemoveFinalizer(t *testing.T) {
	crd := testCRD("foos")
	crd.Finalizers = []string{"a", apiextv1.CustomResourceCleanupFinalizer, "b", apiextv1.CustomResourceCleanupFinalizer}
	removeFinalizer(crd, apiextv1.CustomResourceCleanupFinalizer)
	if !slices.Equal(crd.Finalizers, []string{"a", "b"}) {
		t.Errorf("finalizers = %q", crd.Finalizers)
	}
	removeFinalizer(crd, "a")
	removeFinalizer(crd, "b")
	if crd.Finalizers == nil || len(crd.Finalizers) != 0 {
		t.Errorf("finalizers = %#v, want an empty list", crd.Finalizers)
	}
}

func TestEstablishedCondition(t *testing.T) {
	certPEM, _, err := cert.GenerateSelfSignedCertKey("webhook.example.com", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	withBundle := func(bundle []byte) *apiextv1.CustomResourceDefinition {
		crd := testCRD("foos")
		crd.Spec.Conversion = &apiextv1.CustomResourceConversion{
			Strategy: apiextv1.WebhookConverter,
			Webhook: &apiextv1.WebhookConversion{
				ClientConfig:             &apiextv1.WebhookClientConfig{CABundle: bundle},
				ConversionReviewVersions: []string{"v1"},
			},
		}
		return crd
	}
	tests := []struct {
		name string
		crd  *apiextv1.CustomResourceDefinition
		want apiextv1.CustomResourceDefinitionCondition
	}{
		{"no conversion", testCRD("foos"), established(apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")},
		{"no bundle", withBundle(nil), established(apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")},
		{"valid bundle", withBundle(certPEM), established(apiextv1.ConditionTrue, "InitialNamesAccepted", "the initial names have been accepted")},
		{"invalid bundle", withBundle([]byte("not a certificate")), established(apiextv1.ConditionFalse, "InvalidCABundle", "The conversion webhook CABundle is invalid")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := establishedCondition(tt.crd); got != tt.want {
				t.Errorf("establishedCondition = %+v, want %+v", got, tt.want)
			}
		})
	}
}
