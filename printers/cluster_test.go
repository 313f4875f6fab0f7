package printers

import (
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestNetworkingRows(t *testing.T) {
	rules := func(hosts ...string) []networkingv1.IngressRule {
		out := make([]networkingv1.IngressRule, len(hosts))
		for i, h := range hosts {
			out[i].Host = h
		}
		return out
	}
	ingress := &networkingv1.Ingress{ObjectMeta: created("in"), Spec: networkingv1.IngressSpec{
		IngressClassName: ptr("nginx"), Rules: rules("a", "", "b"), TLS: []networkingv1.IngressTLS{{}},
	}, Status: networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
		Ingress: []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb.example.com"}, {IP: "1.2.3.4"}}}}}
	class := &networkingv1.IngressClass{ObjectMeta: created("c"), Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/nginx",
		Parameters: &networkingv1.IngressClassParametersReference{APIGroup: ptr("example.com"), Kind: "Params", Name: "p"}}}
	class.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
	runRows(t, []rowCase{
		{"ingress", printed(ingressRow, ingress), []any{"in", "nginx", "a,b", "1.2.3.4,lb.example.com", "80, 443", "60m"}},
		{"ingress without hosts", printed(ingressRow, &networkingv1.Ingress{ObjectMeta: created("in"), Spec: networkingv1.IngressSpec{Rules: rules("")}}),
			[]any{"in", "<none>", "*", "", "80", "60m"}},
		{"ingress class", printed(ingressClassRow, class), []any{"c (default)", "k8s.io/nginx", "Params.example.com/p", "60m"}},
		{"ingress class, no parameters", printed(ingressClassRow, &networkingv1.IngressClass{ObjectMeta: created("c")}), []any{"c", "", "<none>", "60m"}},
		{"network policy", printed(networkPolicyRow, &networkingv1.NetworkPolicy{ObjectMeta: created("np"),
			Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}),
			[]any{"np", "app=x", "60m"}},
		{"network policy for all pods", printed(networkPolicyRow, &networkingv1.NetworkPolicy{ObjectMeta: created("np")}), []any{"np", "<none>", "60m"}},
		{"service cidr", printed(serviceCIDRRow, &networkingv1.ServiceCIDR{ObjectMeta: created("kubernetes"),
			Spec: networkingv1.ServiceCIDRSpec{CIDRs: []string{"10.96.0.0/12", "fd00::/108"}}}), []any{"kubernetes", "10.96.0.0/12,fd00::/108", "60m"}},
	})
}

func TestIngressHosts(t *testing.T) {
	rules := func(hosts ...string) []networkingv1.IngressRule {
		out := make([]networkingv1.IngressRule, len(hosts))
		for i, h := range hosts {
			out[i].Host = h
		}
		return out
	}
	for _, tc := range []struct {
		rules []networkingv1.IngressRule
		want  string
	}{
		{nil, "*"},
		{rules("a", "b", "c"), "a,b,c"},
		{rules("a", "b", "c", ""), "a,b,c + 1 more..."},
		{rules("", "a", "b", "c"), "a,b,c"},
		{rules("", "a", "b", "c", "d", "e"), "a,b,c + 3 more..."},
	} {
		if got := ingressHosts(tc.rules); got != tc.want {
			t.Errorf("hosts of %v = %q, want %q", tc.rules, got, tc.want)
		}
	}
}

func TestEndpointSliceRows(t *testing.T) {
	slice := &discoveryv1.EndpointSlice{ObjectMeta: created("s"), AddressType: discoveryv1.AddressTypeIPv4,
		Ports:     []discoveryv1.EndpointPort{{Port: ptr(int32(80))}, {Name: ptr("metrics")}, {}, {Port: ptr(int32(9))}},
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1", "10.0.0.2"}}, {Addresses: []string{"10.0.0.3"}}}}
	runRows(t, []rowCase{
		{"slice", printed(endpointSliceRow, slice), []any{"s", "IPv4", "80,metrics,* + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3", "60m"}},
		{"empty", printed(endpointSliceRow, &discoveryv1.EndpointSlice{ObjectMeta: created("s")}), []any{"s", "", "<unset>", "<unset>", "60m"}},
		{"blank addresses", printed(endpointSliceRow, &discoveryv1.EndpointSlice{ObjectMeta: created("s"),
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{""}}}}), []any{"s", "", "<unset>", "<unset>", "60m"}},
	})
}

func TestStorageRows(t *testing.T) {
	retain, wait := corev1.PersistentVolumeReclaimRetain, storagev1.VolumeBindingWaitForFirstConsumer
	runRows(t, []rowCase{
		{"storage class", printed(storageClassRow, &storagev1.StorageClass{ObjectMeta: created("fast"), Provisioner: "csi.example.com",
			ReclaimPolicy: &retain, VolumeBindingMode: &wait, AllowVolumeExpansion: ptr(true)}),
			[]any{"fast", "csi.example.com", "Retain", "WaitForFirstConsumer", true, "60m"}},
		{"storage class defaults", printed(storageClassRow, &storagev1.StorageClass{ObjectMeta: created("slow")}),
			[]any{"slow", "", "Delete", "Immediate", false, "60m"}},
		{"csi driver", printed(csiDriverRow, &storagev1.CSIDriver{ObjectMeta: created("d"), Spec: storagev1.CSIDriverSpec{
			AttachRequired: ptr(false), PodInfoOnMount: ptr(true), StorageCapacity: ptr(true), RequiresRepublish: ptr(true),
			TokenRequests:        []storagev1.TokenRequest{{Audience: "a"}, {Audience: "b"}},
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral},
		}}), []any{"d", false, true, true, "a,b", true, "Persistent,Ephemeral", "60m"}},
		{"csi driver defaults", printed(csiDriverRow, &storagev1.CSIDriver{ObjectMeta: created("d")}),
			[]any{"d", true, false, false, "<unset>", false, "<none>", "60m"}},
		{"csi node", printed(csiNodeRow, &storagev1.CSINode{ObjectMeta: created("n"),
			Spec: storagev1.CSINodeSpec{Drivers: make([]storagev1.CSINodeDriver, 2)}}), []any{"n", int64(2), "60m"}},
		{"volume attachment", printed(volumeAttachmentRow, &storagev1.VolumeAttachment{ObjectMeta: created("va"),
			Spec: storagev1.VolumeAttachmentSpec{Attacher: "csi.example.com", NodeName: "n1",
				Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("pv")}},
			Status: storagev1.VolumeAttachmentStatus{Attached: true}}), []any{"va", "csi.example.com", "pv", "n1", true, "60m"}},
		{"volume attributes class", printed(volumeAttributesClassRow, &storagev1.VolumeAttributesClass{ObjectMeta: created("gold"),
			DriverName: "csi.example.com"}), []any{"gold", "csi.example.com", "60m"}},
	})
}

// TestStorageClassDefault checks that a list marks the newest default
// class, the first by name among equals, and that one class is not marked.
func TestStorageClassDefault(t *testing.T) {
	class := func(name string, age time.Duration, annotation string) *storagev1.StorageClass {
		sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: ago(age)}}
		if annotation != "" {
			sc.Annotations = map[string]string{annotation: "true"}
		}
		return sc
	}
	const ga, beta = "storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class"
	list := &storagev1.StorageClassList{Items: []storagev1.StorageClass{
		*class("old", time.Hour, ga), *class("b", time.Minute, beta), *class("a", time.Minute, ga), *class("plain", 0, ""),
	}}
	c := For(storageKind("StorageClass"))
	c.(*TableConvertor[*storagev1.StorageClass]).Now = func() time.Time { return now }
	table, err := c.ConvertToTable(t.Context(), list, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []any
	for _, r := range table.Rows {
		names = append(names, r.Cells[0])
	}
	if want := []any{"old", "b", "a (default)", "plain"}; !equalCells(names, want) {
		t.Errorf("names = %v, want %v", names, want)
	}
	table, err = c.ConvertToTable(t.Context(), class("old", time.Hour, ga), nil)
	if err != nil || table.Rows[0].Cells[0] != "old" {
		t.Errorf("one default class printed as %v (%v), want it unmarked", table.Rows, err)
	}
}

func TestClusterRows(t *testing.T) {
	preempt := corev1.PreemptNever
	subjects := []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "Group", Name: "devs"}, {Kind: "User", Name: "bob"},
		{Kind: "ServiceAccount", Namespace: "ns", Name: "sa"}, {Kind: "Other", Name: "x"}}
	runRows(t, []rowCase{
		{"pdb", printed(podDisruptionBudgetRow, &policyv1.PodDisruptionBudget{ObjectMeta: created("pdb"),
			Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr(intstr.FromString("50%"))},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}}), []any{"pdb", "50%", "N/A", int64(1), "60m"}},
		{"pdb max", printed(podDisruptionBudgetRow, &policyv1.PodDisruptionBudget{ObjectMeta: created("pdb"),
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr(intstr.FromInt32(2))}}), []any{"pdb", "N/A", "2", int64(0), "60m"}},
		{"priority class", printed(priorityClassRow, &schedulingv1.PriorityClass{ObjectMeta: created("high"), Value: 1000,
			GlobalDefault: true, PreemptionPolicy: &preempt}), []any{"high", int64(1000), true, "60m", "Never"}},
		{"priority class unset", printed(priorityClassRow, &schedulingv1.PriorityClass{ObjectMeta: created("low")}),
			[]any{"low", int64(0), false, "60m", ""}},
		{"runtime class", printed(runtimeClassRow, &nodev1.RuntimeClass{ObjectMeta: created("gvisor"), Handler: "runsc"}),
			[]any{"gvisor", "runsc", "60m"}},
		{"role binding", printed(rbacConvertors[rbacv1.SchemeGroupVersion.WithKind("RoleBinding")].(*TableConvertor[*rbacv1.RoleBinding]).Row,
			&rbacv1.RoleBinding{ObjectMeta: created("rb"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "view"}, Subjects: subjects}),
			[]any{"rb", "ClusterRole/view", "60m", "alice, bob", "devs", "ns/sa"}},
		{"cluster role binding", printed(rbacConvertors[rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding")].(*TableConvertor[*rbacv1.ClusterRoleBinding]).Row,
			&rbacv1.ClusterRoleBinding{ObjectMeta: created("crb"), RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "admin"}}),
			[]any{"crb", "ClusterRole/admin", "60m", "", "", ""}},
	})
}

func TestCertificateRows(t *testing.T) {
	csr := func(cert []byte, conds ...certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequest {
		c := &certificatesv1.CertificateSigningRequest{ObjectMeta: created("csr"), Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: "kubernetes.io/kube-apiserver-client", Username: "alice", ExpirationSeconds: ptr(int32(86400))},
			Status: certificatesv1.CertificateSigningRequestStatus{Certificate: cert}}
		for _, typ := range conds {
			c.Status.Conditions = append(c.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{Type: typ})
		}
		return c
	}
	cells := func(condition string) []any {
		return []any{"csr", "60m", "kubernetes.io/kube-apiserver-client", "alice", "24h", condition}
	}
	runRows(t, []rowCase{
		{"pending", printed(csrRow, csr(nil)), cells("Pending")},
		{"approved and issued", printed(csrRow, csr([]byte("x"), certificatesv1.CertificateApproved)), cells("Approved,Issued")},
		{"denied and failed", printed(csrRow, csr(nil, certificatesv1.CertificateApproved, certificatesv1.CertificateFailed, certificatesv1.CertificateDenied)),
			cells("Denied,Failed")},
		{"unset", printed(csrRow, &certificatesv1.CertificateSigningRequest{ObjectMeta: created("csr")}),
			[]any{"csr", "60m", "<none>", "", "<none>", "Pending"}},
		{"trust bundle", printed(clusterTrustBundleRow, &certificatesv1.ClusterTrustBundle{ObjectMeta: created("b")}), []any{"b", "<none>"}},
	})
}

func TestFlowControlRows(t *testing.T) {
	fs := &flowcontrolv1.FlowSchema{ObjectMeta: created("fs"), Spec: flowcontrolv1.FlowSchemaSpec{
		PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"}, MatchingPrecedence: 9000,
		DistinguisherMethod: &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
	}, Status: flowcontrolv1.FlowSchemaStatus{Conditions: []flowcontrolv1.FlowSchemaCondition{
		{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse}}}}
	limited := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: created("pl"), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: ptr(int32(30)), LimitResponse: flowcontrolv1.LimitResponse{
				Queuing: &flowcontrolv1.QueuingConfiguration{Queues: 64, HandSize: 6, QueueLengthLimit: 50}}}}}
	rejecting := &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: created("pl"), Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
		Type: flowcontrolv1.PriorityLevelEnablementLimited, Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{}}}
	runRows(t, []rowCase{
		{"flow schema", printed(flowSchemaRow, fs), []any{"fs", "workload-low", int64(9000), "ByUser", "60m", "False"}},
		{"flow schema without status", printed(flowSchemaRow, &flowcontrolv1.FlowSchema{ObjectMeta: created("fs")}),
			[]any{"fs", "", int64(0), "<none>", "60m", "?"}},
		{"queuing level", printed(priorityLevelRow, limited), []any{"pl", "Limited", int32(30), int32(64), int32(6), int32(50), "60m"}},
		{"rejecting level", printed(priorityLevelRow, rejecting), []any{"pl", "Limited", int32(0), "<none>", "<none>", "<none>", "60m"}},
		{"exempt level", printed(priorityLevelRow, &flowcontrolv1.PriorityLevelConfiguration{ObjectMeta: created("pl"),
			Spec: flowcontrolv1.PriorityLevelConfigurationSpec{Type: flowcontrolv1.PriorityLevelEnablementExempt}}),
			[]any{"pl", "Exempt", "<none>", "<none>", "<none>", "<none>", "60m"}},
	})
}

func TestAdmissionRows(t *testing.T) {
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "v"},
		Webhooks: make([]admissionregistrationv1.ValidatingWebhook, 2)}
	vap := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
		ParamKind: &admissionregistrationv1.ParamKind{APIVersion: "v1", Kind: "ConfigMap"}, Validations: make([]admissionregistrationv1.Validation, 3)}}
	binding := func(ref *admissionregistrationv1.ParamRef) *admissionregistrationv1.ValidatingAdmissionPolicyBinding {
		return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: "p", ParamRef: ref}}
	}
	for _, tc := range []struct {
		kind string
		obj  runtime.Object
		want []any
	}{
		{"ValidatingWebhookConfiguration", vwc, []any{"v", int64(2), "<unknown>"}},
		{"MutatingWebhookConfiguration", &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, []any{"m", int64(0), "<unknown>"}},
		{"ValidatingAdmissionPolicy", vap, []any{"p", int64(3), "v1/ConfigMap", "<unknown>"}},
		{"MutatingAdmissionPolicy", &admissionregistrationv1.MutatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, []any{"m", int64(0), "<unset>", "<unknown>"}},
		{"ValidatingAdmissionPolicyBinding", binding(nil), []any{"b", "p", "<unset>", "<unknown>"}},
		{"ValidatingAdmissionPolicyBinding", binding(&admissionregistrationv1.ParamRef{Name: "cm", Namespace: "ns"}), []any{"b", "p", "ns/cm", "<unknown>"}},
		{"ValidatingAdmissionPolicyBinding", binding(&admissionregistrationv1.ParamRef{Name: "cm"}), []any{"b", "p", "*/cm", "<unknown>"}},
		{"ValidatingAdmissionPolicyBinding", binding(&admissionregistrationv1.ParamRef{Selector: &metav1.LabelSelector{}}),
			[]any{"b", "p", (&metav1.LabelSelector{}).String(), "<unknown>"}},
		{"MutatingAdmissionPolicyBinding", &admissionregistrationv1.MutatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: "b"},
			Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: "m", ParamRef: &admissionregistrationv1.ParamRef{}}},
			[]any{"b", "m", "<unset>", "<unknown>"}},
	} {
		table, err := For(admissionKind(tc.kind)).ConvertToTable(t.Context(), tc.obj, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.kind, err)
		}
		if got := table.Rows[0].Cells; !equalCells(got, tc.want) {
			t.Errorf("%s: cells = %#v, want %#v", tc.kind, got, tc.want)
		}
	}
}
