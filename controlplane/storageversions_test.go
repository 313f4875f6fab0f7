package controlplane

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/storage/storagecodec"
)

// TestKubeStorageVersions: the resources that went GA in kube v1.37 are
// written at the version kube-apiserver v1.37.2 writes them at (its
// storage factory's overrides, checked against the values it stored in
// test/e2e's kube recordings), read back from it, and values written at
// the GA version (by capstans before they stored kube's version) still
// read.
func TestKubeStorageVersions(t *testing.T) {
	meta := metav1.ObjectMeta{Name: "one", UID: "uid-1", CreationTimestamp: metav1.Unix(1700000000, 0), Labels: map[string]string{"a": "b"}}
	tests := []struct {
		gr   schema.GroupResource
		ga   schema.GroupVersion
		kube string // the apiVersion of kube's envelope
		obj  runtime.Object
	}{
		{schema.GroupResource{Group: "certificates.k8s.io", Resource: "clustertrustbundles"}, certificatesv1.SchemeGroupVersion,
			"certificates.k8s.io/v1beta1", &certificatesv1.ClusterTrustBundle{ObjectMeta: meta,
				Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: "example.com/s", TrustBundle: "-----BEGIN CERTIFICATE-----\n"}}},
		{schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}, certificatesv1.SchemeGroupVersion,
			"certificates.k8s.io/v1beta1", &certificatesv1.PodCertificateRequest{ObjectMeta: meta,
				Spec: certificatesv1.PodCertificateRequestSpec{SignerName: "example.com/pods", PodName: "web", PodUID: "p",
					ServiceAccountName: "default", ServiceAccountUID: "s", NodeName: "node-1", NodeUID: "n",
					MaxExpirationSeconds: ptr.To[int32](86400), StubPKCS10Request: []byte{1, 2, 3},
					UnverifiedUserAnnotations: map[string]string{"example.com/k": "v"}},
				Status: certificatesv1.PodCertificateRequestStatus{CertificateChain: "chain", NotBefore: ptr.To(metav1.Unix(1700000000, 0))}}},
		{schema.GroupResource{Group: "storagemigration.k8s.io", Resource: "storageversionmigrations"}, svmv1.SchemeGroupVersion,
			"storagemigration.k8s.io/v1beta1", &svmv1.StorageVersionMigration{ObjectMeta: meta,
				Spec:   svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Resource: "secrets"}},
				Status: svmv1.StorageVersionMigrationStatus{ResourceVersion: "5"}}},
		{schema.GroupResource{Group: "resource.k8s.io", Resource: "devicetaintrules"}, resourcev1.SchemeGroupVersion,
			"resource.k8s.io/v1beta2", &resourcev1.DeviceTaintRule{ObjectMeta: meta, Spec: resourcev1.DeviceTaintRuleSpec{
				DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: ptr.To("gpu.example.com"), Pool: ptr.To("p")},
				Taint:          resourcev1.DeviceTaint{Key: "example.com/k", Value: "v", Effect: resourcev1.DeviceTaintEffectNoSchedule, TimeAdded: ptr.To(metav1.Unix(1700000000, 0))}}}},
		{schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, schema.GroupVersion{Group: "events.k8s.io", Version: "v1"}, "v1", nil},
		{schema.GroupResource{Group: "autoscaling", Resource: "horizontalpodautoscalers"}, autoscalingV2, "autoscaling/v2", nil},
	}
	var listed []schema.GroupResource
	for _, tc := range tests {
		listed = append(listed, tc.gr)
		if got := storageVersion(tc.gr, tc.ga).String(); got != tc.kube {
			t.Errorf("%s is stored at %s, kube stores it at %s", tc.gr, got, tc.kube)
		}
		if tc.obj == nil {
			continue // their conversions have tests of their own
		}
		t.Run(tc.gr.String(), func(t *testing.T) {
			codec := storagecodec.NewConverting(scheme.Scheme, scheme.Codecs, storageVersion(tc.gr, tc.ga), tc.ga)
			data, err := runtime.Encode(codec, tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got := envelopeVersion(t, data); got != tc.kube {
				t.Errorf("envelope apiVersion %s, want kube's %s", got, tc.kube)
			}
			older, err := runtime.Encode(storagecodec.New(scheme.Scheme, scheme.Codecs, tc.ga), tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			for name, stored := range map[string][]byte{"kube's version": data, "the GA version": older} {
				out := tc.obj.DeepCopyObject()
				out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
				if _, _, err := codec.Decode(stored, nil, out); err != nil {
					t.Fatalf("decoding %s: %v", name, err)
				}
				out.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
				tc.obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
				if !equality.Semantic.DeepEqual(out, tc.obj) {
					t.Errorf("decoded from %s:\n got  %+v\n want %+v", name, out, tc.obj)
				}
			}
		})
	}
	if got := slices.Collect(maps.Keys(kubeStorageVersions)); len(got) != len(listed) {
		t.Errorf("kubeStorageVersions has %v, the test %v", got, listed)
	}
}

// envelopeVersion is the apiVersion of a value in kube's protobuf envelope.
func envelopeVersion(t *testing.T, data []byte) string {
	t.Helper()
	if !bytes.HasPrefix(data, []byte("k8s\x00")) {
		t.Fatalf("stored %.20q, not kube's envelope", data)
	}
	var u runtime.Unknown
	if err := u.Unmarshal(data[4:]); err != nil {
		t.Fatal(err)
	}
	return u.APIVersion
}

// TestKubeStorageVersionCarry: a PodCertificateRequest kube stored at
// v1beta1 with the fields v1 lacks (pkixPublicKey, proofOfPossession)
// keeps them through an update of its v1 form, as through kube's internal
// types.
func TestKubeStorageVersionCarry(t *testing.T) {
	gr := schema.GroupResource{Group: "certificates.k8s.io", Resource: "podcertificaterequests"}
	codec := storagecodec.NewConverting(scheme.Scheme, scheme.Codecs, storageVersion(gr, certificatesv1.SchemeGroupVersion), certificatesv1.SchemeGroupVersion)
	kube := &certificatesv1beta1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: "ns"},
		Spec: certificatesv1beta1.PodCertificateRequestSpec{SignerName: "example.com/pods", PodName: "web",
			PKIXPublicKey: []byte("public key"), ProofOfPossession: []byte("proof")}}
	old, err := runtime.Encode(storagecodec.New(scheme.Scheme, scheme.Codecs, certificatesv1beta1.SchemeGroupVersion), kube)
	if err != nil {
		t.Fatal(err)
	}
	var pcr certificatesv1.PodCertificateRequest
	if _, _, err := codec.Decode(old, nil, &pcr); err != nil {
		t.Fatal(err)
	}
	pcr.Status.CertificateChain = "chain"
	data, err := runtime.Encode(codec, &pcr)
	if err != nil {
		t.Fatal(err)
	}
	carried, err := codec.(interface {
		Carry(data, old []byte) ([]byte, error)
	}).Carry(data, old)
	if err != nil {
		t.Fatal(err)
	}
	var got certificatesv1beta1.PodCertificateRequest
	if _, _, err := storagecodec.New(scheme.Scheme, scheme.Codecs, certificatesv1beta1.SchemeGroupVersion).Decode(carried, nil, &got); err != nil {
		t.Fatal(err)
	}
	if string(got.Spec.PKIXPublicKey) != "public key" || string(got.Spec.ProofOfPossession) != "proof" ||
		got.Status.CertificateChain != "chain" || got.Spec.PodName != "web" {
		t.Errorf("stored after the update: %+v %+v", got.Spec, got.Status)
	}
	if envelopeVersion(t, carried) != "certificates.k8s.io/v1beta1" {
		t.Errorf("stored at %s", envelopeVersion(t, carried))
	}
}
