package crd

import (
	"bytes"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/test/e2e/e2eutil"
)

// The recorded objects of the kinds that went GA in kube 1.37, which kube
// stores at their 1.36 betas (v1beta1; v1beta2 for device taint rules).
const (
	kubeTrustBundle = "/registry/clustertrustbundles/example.com:kubeform:one"
	kubeMigration   = "/registry/storageversionmigrations/kubeform-configmaps"
	kubeTaintRule   = "/registry/devicetaintrules/kubeform-drain"
	kubePCR         = "/registry/podcertificaterequests/kubeform/web"
	// kubeLegacyPCR was written at v1beta1 with pkixPublicKey and
	// proofOfPossession, which v1 has no fields for.
	kubeLegacyPCR = "/registry/podcertificaterequests/kubeform/legacy"
)

// updateGA137 reads the recorded objects of the 1.37 GA kinds at v1 and
// labels each (a merge patch: the storage version migrator may write the
// migration's status meanwhile).
func updateGA137(t *testing.T, c kubernetes.Interface, label string) {
	t.Helper()
	bundle, err := c.CertificatesV1().ClusterTrustBundles().Get(e2eutil.Ctx(t), "example.com:kubeform:one", metav1.GetOptions{})
	if err != nil || bundle.Spec.SignerName != "example.com/kubeform" || bundle.Spec.TrustBundle == "" {
		t.Fatalf("trust bundle = %+v, %v", bundle, err)
	}
	svm, err := c.StoragemigrationV1().StorageVersionMigrations().Get(e2eutil.Ctx(t), "kubeform-configmaps", metav1.GetOptions{})
	if err != nil || svm.Spec.Resource.Resource != "configmaps" {
		t.Fatalf("migration = %+v, %v", svm, err)
	}
	rule, err := c.ResourceV1().DeviceTaintRules().Get(e2eutil.Ctx(t), "kubeform-drain", metav1.GetOptions{})
	if err != nil || rule.Spec.Taint.Value != "yes" || rule.Spec.Taint.TimeAdded == nil || *rule.Spec.DeviceSelector.Driver != "gpu.example.com" {
		t.Fatalf("taint rule = %+v, %v", rule, err)
	}
	pcrs := c.CertificatesV1().PodCertificateRequests("kubeform")
	pcr, err := pcrs.Get(e2eutil.Ctx(t), "web", metav1.GetOptions{})
	if err != nil || len(pcr.Spec.StubPKCS10Request) == 0 || pcr.Spec.NodeName != "node-1" {
		t.Fatalf("pod certificate request = %+v, %v", pcr, err)
	}
	patch := []byte(`{"metadata":{"labels":{"capstan-` + label + `":"updated"}}}`)
	for name, p := range map[string]func() error{
		"trust bundle": func() error {
			_, err := c.CertificatesV1().ClusterTrustBundles().Patch(e2eutil.Ctx(t), bundle.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
		"migration": func() error {
			_, err := c.StoragemigrationV1().StorageVersionMigrations().Patch(e2eutil.Ctx(t), svm.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
		"taint rule": func() error {
			_, err := c.ResourceV1().DeviceTaintRules().Patch(e2eutil.Ctx(t), rule.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
		"pod certificate request": func() error {
			_, err := pcrs.Patch(e2eutil.Ctx(t), pcr.Name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		},
	} {
		if err := p(); err != nil {
			t.Errorf("%s: labelling the %s: %v", label, name, err)
		}
	}
}

// denyLegacyPCR denies the v1beta1 request through v1, as a signer would:
// the status update cannot carry the fields v1 lacks, which stay.
func denyLegacyPCR(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	pcrs := c.CertificatesV1().PodCertificateRequests("kubeform")
	pcr, err := pcrs.Get(e2eutil.Ctx(t), "legacy", metav1.GetOptions{})
	if err != nil || pcr.Spec.PodUID != "legacy-pod-uid" || pcr.Spec.StubPKCS10Request != nil {
		t.Fatalf("legacy pod certificate request = %+v, %v", pcr, err)
	}
	pcr.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied,
		Status: metav1.ConditionTrue, Reason: "Legacy", Message: "denied by capstan", LastTransitionTime: metav1.Now()}}
	if _, err := pcrs.UpdateStatus(e2eutil.Ctx(t), pcr, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("denying the legacy request: %v", err)
	}
}

// wantLegacyPCRKept checks that the legacy request capstan denied is
// stored with the public key and proof kube stored.
func wantLegacyPCRKept(t *testing.T, kube, got []byte) {
	t.Helper()
	k, g := legacyPCR(t, kube), legacyPCR(t, got)
	if len(k.Spec.PKIXPublicKey) == 0 || !bytes.Equal(k.Spec.PKIXPublicKey, g.Spec.PKIXPublicKey) ||
		len(k.Spec.ProofOfPossession) == 0 || !bytes.Equal(k.Spec.ProofOfPossession, g.Spec.ProofOfPossession) {
		t.Errorf("the legacy request lost kube's public key or proof: kube %+v\n got %+v", k.Spec, g.Spec)
	}
	if len(g.Status.Conditions) != 1 || g.Status.Conditions[0].Message != "denied by capstan" {
		t.Errorf("the legacy request's status is %+v", g.Status)
	}
}

// legacyPCR decodes a PodCertificateRequest stored at v1beta1.
func legacyPCR(t *testing.T, raw []byte) *certificatesv1beta1.PodCertificateRequest {
	t.Helper()
	u := decodeEnvelope(t, raw)
	if u.APIVersion != "certificates.k8s.io/v1beta1" {
		t.Fatalf("the legacy request is stored at %s", u.APIVersion)
	}
	var pcr certificatesv1beta1.PodCertificateRequest
	if err := pcr.Unmarshal(u.Raw); err != nil {
		t.Fatal(err)
	}
	return &pcr
}
