package catalog

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/capstan-io/capstan/internal/testkit"
)

func storage(size string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)}
}

func TestNodesVolumesClaimsAndQuotas(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	testNodes(t, c)
	testVolumes(t, c)
	testClaims(t, c)
	testLimitsAndQuotas(t, c)
	out, _, err := testkit.RunKubectl(t, s.Kubeconfig, nil, "get", "pv,pvc,nodes", "-n", "default")
	if err != nil || !strings.Contains(out, "persistentvolume/data") || !strings.Contains(out, "persistentvolumeclaim/claim") ||
		!strings.Contains(out, "node/n1") {
		t.Fatalf("kubectl get pv,pvc,nodes: %v\n%s", err, out)
	}
}

func testNodes(t *testing.T, c kubernetes.Interface) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{
		Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourcePods: resource.MustParse("110")}}}
	got, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := got.Status.Allocatable[corev1.ResourceCPU]; q.String() != "4" {
		t.Fatalf("allocatable not defaulted from capacity: %v", got.Status)
	}
	got.Spec.Unschedulable = true
	if _, err := c.CoreV1().Nodes().Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: "spec.unschedulable=true"})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("field selector spec.unschedulable: %v, %v", list, err)
	}
	bad := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}, Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "k", Effect: "Never"}}}}
	_, err = c.CoreV1().Nodes().Create(ctx, bad, metav1.CreateOptions{})
	assertInvalid(t, err, "metadata.taints[0].effect") // kube reports node taints under metadata
}

func testVolumes(t *testing.T, c kubernetes.Interface) {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeSpec{
		Capacity: storage("1Gi"), AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
	}}
	got, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain || *got.Spec.VolumeMode != corev1.PersistentVolumeFilesystem ||
		got.Status.Phase != corev1.VolumePending || got.Status.LastPhaseTransitionTime == nil {
		t.Fatalf("volume defaults: %+v %+v", got.Spec, got.Status)
	}
	noSource := pv.DeepCopy()
	noSource.Name, noSource.Spec.HostPath = "none", nil
	_, err = c.CoreV1().PersistentVolumes().Create(ctx, noSource, metav1.CreateOptions{})
	assertInvalid(t, err, "spec")
	got.Spec.HostPath.Path = "/elsewhere"
	_, err = c.CoreV1().PersistentVolumes().Update(ctx, got, metav1.UpdateOptions{})
	assertInvalid(t, err, "spec.persistentvolumesource")
}

func testClaims(t *testing.T, c kubernetes.Interface) {
	// Only a claim of a class that allows expansion may grow
	// (PersistentVolumeClaimResize, on by default).
	expandable := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "expandable"}, Provisioner: "example.com/disk",
		AllowVolumeExpansion: ptr.To(true)}
	if _, err := c.StorageV1().StorageClasses().Create(ctx, expandable, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claims := c.CoreV1().PersistentVolumeClaims("default")
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim"}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:        corev1.VolumeResourceRequirements{Requests: storage("1Gi")},
		StorageClassName: ptr.To("expandable"),
	}}
	got, err := claims.Create(ctx, pvc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || got.Status.Phase != corev1.ClaimPending {
		t.Fatalf("claim defaults: %+v %+v", got.Spec, got.Status)
	}
	noSize := pvc.DeepCopy()
	noSize.Name, noSize.Spec.Resources.Requests = "nosize", nil
	_, err = claims.Create(ctx, noSize, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.resources[storage]")

	grow := got.DeepCopy()
	grow.Spec.Resources.Requests = storage("2Gi")
	_, err = claims.Update(ctx, grow, metav1.UpdateOptions{})
	assertInvalid(t, err, "spec")
	if !strings.Contains(err.Error(), "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims") {
		t.Fatalf("immutable claim spec: %v", err)
	}
	got.Spec.VolumeName = "data"
	if got, err = claims.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("binding the claim to a volume: %v", err)
	}
	got.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: storage("1Gi"),
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}}
	if got, err = claims.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The pvc-protection loop writes a bound claim's Unused condition:
	// resize the claim as stored.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if got, err = claims.Get(ctx, "claim", metav1.GetOptions{}); err != nil {
			return err
		}
		got.Spec.Resources.Requests = storage("2Gi")
		got, err = claims.Update(ctx, got, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("resizing a bound claim: %v", err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if got, err = claims.Get(ctx, "claim", metav1.GetOptions{}); err != nil {
			return err
		}
		got.Spec.Resources.Requests = storage("500Mi")
		_, err = claims.Update(ctx, got, metav1.UpdateOptions{})
		return err
	})
	assertInvalid(t, err, "spec.resources.requests.storage")
}

func testLimitsAndQuotas(t *testing.T, c kubernetes.Interface) {
	cpu := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
	}
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Max: cpu("2"), Min: cpu("100m")}}}}
	got, err := c.CoreV1().LimitRanges("default").Create(ctx, lr, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	item := got.Spec.Limits[0]
	if d, r := item.Default[corev1.ResourceCPU], item.DefaultRequest[corev1.ResourceCPU]; d.String() != "2" || r.String() != "2" {
		t.Fatalf("limit range defaults: default %s request %s", d.String(), r.String())
	}
	lr.Name, lr.Spec.Limits[0].Min = "inverted", cpu("3")
	_, err = c.CoreV1().LimitRanges("default").Create(ctx, lr, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.limits[0].min[cpu]")

	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "quota"}, Spec: corev1.ResourceQuotaSpec{
		Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("10")}},
		Status: corev1.ResourceQuotaStatus{Used: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3")}}}
	gotQ, err := c.CoreV1().ResourceQuotas("default").Create(ctx, quota, metav1.CreateOptions{})
	if err != nil || gotQ.Status.Used != nil {
		t.Fatalf("quota create: %+v, %v (status must be reset)", gotQ, err)
	}
	quota.Name, quota.Spec.Hard[corev1.ResourcePods] = "fractional", resource.MustParse("1.5")
	_, err = c.CoreV1().ResourceQuotas("default").Create(ctx, quota, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.hard[pods]")
}

func TestPriorityClassesRuntimeClassesAndCertificates(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	testPriorityClasses(t, c)
	testRuntimeClasses(t, c)
	testCertificateSigningRequests(t, c)
}

func testPriorityClasses(t *testing.T, c kubernetes.Interface) {
	pcs := c.SchedulingV1().PriorityClasses()
	for name, value := range map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000} {
		pc, err := pcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil || pc.Value != value {
			t.Fatalf("system priority class %s: %+v, %v", name, pc, err)
		}
	}
	got, err := pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000, GlobalDefault: true},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.PreemptionPolicy != corev1.PreemptLowerPriority || got.Generation != 1 {
		t.Fatalf("priority class defaults: %+v", got)
	}
	got.Value = 2000
	_, err = pcs.Update(ctx, got, metav1.UpdateOptions{})
	assertInvalid(t, err, "value")
	_, err = pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "system-mine"}, Value: 1}, metav1.CreateOptions{})
	assertInvalid(t, err, "metadata.name")
	_, err = pcs.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "other"}, GlobalDefault: true}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "PriorityClass high is already marked as default. Only one default can exist") {
		t.Fatalf("second global default: %v, want 403", err)
	}
}

func testRuntimeClasses(t *testing.T, c kubernetes.Interface) {
	rcs := c.NodeV1().RuntimeClasses()
	rc := &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc",
		Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}
	got, err := rcs.Create(ctx, rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Handler = "kata"
	_, err = rcs.Update(ctx, got, metav1.UpdateOptions{})
	assertInvalid(t, err, "handler")
	_, err = rcs.Create(ctx, &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Handler: "Run.C"}, metav1.CreateOptions{})
	assertInvalid(t, err, "handler")
}

func testCertificateSigningRequests(t *testing.T, c kubernetes.Interface) {
	csrs := c.CertificatesV1().CertificateSigningRequests()
	csr := &certificatesv1.CertificateSigningRequest{ObjectMeta: metav1.ObjectMeta{Name: "alice"},
		Spec: certificatesv1.CertificateSigningRequestSpec{Request: certificateRequest(t), Username: "mallory",
			SignerName: certificatesv1.KubeAPIServerClientSignerName, Usages: []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth}}}
	got, err := csrs.Create(ctx, csr, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Username != "admin" || !slices.Contains(got.Spec.Groups, "system:masters") {
		t.Fatalf("requestor not taken from the request's user: %+v", got.Spec)
	}
	bad := csr.DeepCopy()
	bad.Name, bad.Spec.Request = "bad", []byte("not a request")
	_, err = csrs.Create(ctx, bad, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.request")

	approved := certificatesv1.CertificateSigningRequestCondition{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
		Reason: "Test", Message: "approved by the test"}
	withStatus := got.DeepCopy()
	withStatus.Status.Conditions = append(withStatus.Status.Conditions, approved)
	_, err = csrs.UpdateStatus(ctx, withStatus, metav1.UpdateOptions{})
	assertInvalid(t, err, "status.conditions")
	got.Status.Conditions = append(got.Status.Conditions, approved)
	got, err = csrs.UpdateApproval(ctx, "alice", got, metav1.UpdateOptions{})
	if err != nil || len(got.Status.Conditions) != 1 || got.Status.Conditions[0].LastUpdateTime.IsZero() {
		t.Fatalf("approval: %+v, %v", got, err)
	}
	denied := approved
	denied.Type = certificatesv1.CertificateDenied
	got.Status.Conditions = append(got.Status.Conditions, denied)
	_, err = csrs.UpdateApproval(ctx, "alice", got, metav1.UpdateOptions{})
	assertInvalid(t, err, "status.conditions")
}

// certificateRequest returns a PEM PKCS#10 request of a fresh key.
func certificateRequest(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{Subject: pkix.Name{CommonName: "alice"}}, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der})
}
