package printers

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCoreRows(t *testing.T) {
	runRows(t, []rowCase{
		{"namespace", printed(namespaceRow, &corev1.Namespace{ObjectMeta: created("ns"),
			Status: corev1.NamespaceStatus{Phase: corev1.NamespaceTerminating}}), []any{"ns", "Terminating", "60m"}},
		{"namespace never created", printed(namespaceRow, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}),
			[]any{"ns", "", "<unknown>"}},
		{"configmap counts binary data", printed(configMapRow, &corev1.ConfigMap{ObjectMeta: created("cm"),
			Data: map[string]string{"a": "1", "b": "2"}, BinaryData: map[string][]byte{"c": {3}}}), []any{"cm", int64(3), "60m"}},
		{"secret counts stringData once", printed(secretRow, &corev1.Secret{ObjectMeta: created("s"), Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{"a": nil}, StringData: map[string]string{"a": "", "b": ""}}), []any{"s", "Opaque", int64(2), "60m"}},
		{"serviceaccount", printed(serviceAccountRow, &corev1.ServiceAccount{ObjectMeta: created("sa"),
			Secrets: []corev1.ObjectReference{{Name: "t"}}}), []any{"sa", "60m"}},
		{"podtemplate", printed(podTemplateRow, &corev1.PodTemplate{ObjectMeta: created("pt"), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x", "tier": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "ia"}, {Name: "b", Image: "ib"}}},
		}}), []any{"pt", "a,b", "ia,ib", "app=x,tier=web"}},
		{"replicationcontroller", printed(replicationControllerRow, &corev1.ReplicationController{ObjectMeta: created("rc"),
			Spec: corev1.ReplicationControllerSpec{Replicas: ptr(int32(3)), Selector: map[string]string{"app": "x"},
				Template: &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "ia"}}}}},
			Status: corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1},
		}), []any{"rc", int64(3), int64(2), int64(1), "60m", "a", "ia", "app=x"}},
		{"replicationcontroller without template", printed(replicationControllerRow, &corev1.ReplicationController{ObjectMeta: created("rc")}),
			[]any{"rc", int64(0), int64(0), int64(0), "60m", "", "", "<none>"}},
	})
}

func TestNodeRows(t *testing.T) {
	node := func(edit func(n *corev1.Node)) *corev1.Node {
		n := &corev1.Node{ObjectMeta: created("n")}
		edit(n)
		return n
	}
	runRows(t, []rowCase{
		{"ready control plane", printed(nodeRow, node(func(n *corev1.Node) {
			n.Labels = map[string]string{"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x",
				"kubernetes.io/role": "master", "node-role.kubernetes.io/etcd": "true"}
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse},
				{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: "h"},
				{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.2"}}
			n.Status.NodeInfo = corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", OSImage: "Debian", KernelVersion: "6.1",
				Architecture: "amd64", ContainerRuntimeVersion: "containerd://2.0"}
		})), []any{"n", "Ready", "control-plane,etcd,master", "60m", "v1.37.2", "10.0.0.1", "<none>", "Debian", "6.1 (amd64)", "containerd://2.0"}},
		{"cordoned, not ready", printed(nodeRow, node(func(n *corev1.Node) {
			n.Spec.Unschedulable = true
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "1.2.3.4"}}
			n.Status.NodeInfo.Architecture = "arm64"
		})), []any{"n", "NotReady,SchedulingDisabled", "<none>", "60m", "", "<none>", "1.2.3.4", "<unknown>", "<unknown> (arm64)", "<unknown>"}},
		{"no conditions", printed(nodeRow, node(func(*corev1.Node) {})),
			[]any{"n", "Unknown", "<none>", "60m", "", "<none>", "<none>", "<unknown>", "<unknown>", "<unknown>"}},
	})
}

func TestResourceQuotaRow(t *testing.T) {
	q := &corev1.ResourceQuota{ObjectMeta: created("q"), Status: corev1.ResourceQuotaStatus{
		Hard: corev1.ResourceList{"pods": resource.MustParse("10"), "requests.cpu": resource.MustParse("2"),
			"limits.memory": resource.MustParse("2Gi"), "limits.cpu": resource.MustParse("4"), "limitsx": resource.MustParse("1")},
		Used: corev1.ResourceList{"pods": resource.MustParse("3"), "limits.cpu": resource.MustParse("500m")},
	}}
	runRows(t, []rowCase{
		{"quota", printed(resourceQuotaRow, q), []any{"q", "limitsx: 0/1, pods: 3/10, requests.cpu: 0/2",
			"limits.cpu: 500m/4, limits.memory: 0/2Gi", "60m"}},
		{"empty", printed(resourceQuotaRow, &corev1.ResourceQuota{ObjectMeta: created("q")}), []any{"q", "", "", "60m"}},
	})
}

func TestServiceRows(t *testing.T) {
	svc := func(typ corev1.ServiceType, edit func(s *corev1.Service)) *corev1.Service {
		s := &corev1.Service{ObjectMeta: created("s"), Spec: corev1.ServiceSpec{Type: typ}}
		edit(s)
		return s
	}
	lb := []corev1.LoadBalancerIngress{{IP: "5.6.7.8"}, {Hostname: "lb.example.com"}, {IP: "1.2.3.4", Hostname: "ignored"}, {IP: "5.6.7.8"}}
	runRows(t, []rowCase{
		{"cluster ip", printed(serviceRow, svc(corev1.ServiceTypeClusterIP, func(s *corev1.Service) {
			s.Spec.ClusterIPs = []string{"10.96.0.10", "fd00::10"}
			s.Spec.Ports = []corev1.ServicePort{{Port: 53, Protocol: corev1.ProtocolUDP}, {Port: 53, Protocol: corev1.ProtocolTCP}}
			s.Spec.Selector = map[string]string{"k8s-app": "dns"}
		})), []any{"s", "ClusterIP", "10.96.0.10", "<none>", "53/UDP,53/TCP", "60m", "k8s-app=dns"}},
		{"headless node port", printed(serviceRow, svc(corev1.ServiceTypeNodePort, func(s *corev1.Service) {
			s.Spec.ExternalIPs = []string{"9.9.9.9", "8.8.8.8"}
			s.Spec.Ports = []corev1.ServicePort{{Port: 80, NodePort: 30080, Protocol: corev1.ProtocolTCP}}
		})), []any{"s", "NodePort", "<none>", "9.9.9.9,8.8.8.8", "80:30080/TCP", "60m", "<none>"}},
		{"pending load balancer", printed(serviceRow, svc(corev1.ServiceTypeLoadBalancer, func(*corev1.Service) {})),
			[]any{"s", "LoadBalancer", "<none>", "<pending>", "<none>", "60m", "<none>"}},
		{"load balancer", printed(serviceRow, svc(corev1.ServiceTypeLoadBalancer, func(s *corev1.Service) {
			s.Status.LoadBalancer.Ingress = lb
			s.Spec.ExternalIPs = []string{"9.9.9.9"}
		})), []any{"s", "LoadBalancer", "<none>", "1.2.3.4,5.6.7.8,lb.example.com,9.9.9.9", "<none>", "60m", "<none>"}},
		{"external name", printed(serviceRow, svc(corev1.ServiceTypeExternalName, func(s *corev1.Service) { s.Spec.ExternalName = "db.example.com" })),
			[]any{"s", "ExternalName", "<none>", "db.example.com", "<none>", "60m", "<none>"}},
		{"no type", printed(serviceRow, svc("", func(*corev1.Service) {})), []any{"s", "", "<none>", "<unknown>", "<none>", "60m", "<none>"}},
	})
}

func TestEndpointsRows(t *testing.T) {
	addrs := func(ips ...string) []corev1.EndpointAddress {
		out := make([]corev1.EndpointAddress, len(ips))
		for i, ip := range ips {
			out[i].IP = ip
		}
		return out
	}
	ep := func(subsets ...corev1.EndpointSubset) *corev1.Endpoints {
		return &corev1.Endpoints{ObjectMeta: created("e"), Subsets: subsets}
	}
	runRows(t, []rowCase{
		{"none", printed(endpointsRow, ep()), []any{"e", "<none>", "60m"}},
		{"not ready", printed(endpointsRow, ep(corev1.EndpointSubset{NotReadyAddresses: addrs("10.0.0.1")})), []any{"e", "", "60m"}},
		{"headless", printed(endpointsRow, ep(corev1.EndpointSubset{Addresses: addrs("10.0.0.1", "10.0.0.2")})),
			[]any{"e", "10.0.0.1,10.0.0.2", "60m"}},
		{"ports and more", printed(endpointsRow, ep(
			corev1.EndpointSubset{Addresses: addrs("10.0.0.1", "fd00::1"), Ports: []corev1.EndpointPort{{Port: 80}, {Port: 443}}},
			corev1.EndpointSubset{Addresses: addrs("10.0.0.3")},
		)), []any{"e", "10.0.0.1:80,[fd00::1]:80,10.0.0.1:443 + 2 more...", "60m"}},
	})
}

func TestVolumeRows(t *testing.T) {
	fs := corev1.PersistentVolumeFilesystem
	pv := &corev1.PersistentVolume{ObjectMeta: created("pv"), Spec: corev1.PersistentVolumeSpec{
		Capacity:    corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce, corev1.ReadWriteOnce, corev1.ReadOnlyMany},
		ClaimRef:    &corev1.ObjectReference{Namespace: "ns", Name: "c"}, PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		StorageClassName: "fast", VolumeMode: &fs, VolumeAttributesClassName: ptr("gold"),
	}, Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, Reason: "why"}}
	deleted := pv.DeepCopy()
	deleted.DeletionTimestamp = ptr(ago(time.Second))
	deleted.Annotations = map[string]string{"volume.beta.kubernetes.io/storage-class": "beta"}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: created("c"), Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: ptr("fast"),
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
	}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}}
	bound := pvc.DeepCopy()
	bound.Spec.VolumeName, bound.Spec.VolumeMode = "pv", &fs
	bound.Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
		Capacity: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")}}
	runRows(t, []rowCase{
		{"pv", printed(persistentVolumeRow, pv), []any{"pv", "10Gi", "RWO,ROX,RWOP", "Retain", "Bound", "ns/c", "fast", "gold", "why", "60m", "Filesystem"}},
		{"pv deleted", printed(persistentVolumeRow, deleted), []any{"pv", "10Gi", "RWO,ROX,RWOP", "Retain", "Terminating", "ns/c", "beta", "gold", "why", "60m", "Filesystem"}},
		{"pv empty", printed(persistentVolumeRow, &corev1.PersistentVolume{ObjectMeta: created("pv")}),
			[]any{"pv", "0", "", "", "", "", "", "<unset>", "", "60m", "<unset>"}},
		{"pvc pending", printed(persistentVolumeClaimRow, pvc), []any{"c", "Pending", "", "", "", "fast", "<unset>", "60m", "<unset>"}},
		{"pvc bound", printed(persistentVolumeClaimRow, bound), []any{"c", "Bound", "pv", "2Gi", "RWX", "fast", "<unset>", "60m", "Filesystem"}},
	})
}

func TestEventRows(t *testing.T) {
	core := &corev1.Event{ObjectMeta: created("e.1"), Type: "Warning", Reason: "BackOff", Message: "  restarting \n",
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p", FieldPath: "spec.containers{a}"},
		Source:         corev1.EventSource{Component: "kubelet", Host: "n1"},
		FirstTimestamp: ago(time.Hour), LastTimestamp: ago(time.Minute), Count: 7}
	series := &eventsv1.Event{ObjectMeta: created("e.2"), Type: "Normal", Reason: "Scheduled", Note: "assigned",
		Regarding: corev1.ObjectReference{Kind: "Node"}, EventTime: metav1.NewMicroTime(now.Add(-3 * time.Hour)),
		ReportingController: "scheduler", ReportingInstance: "s-1",
		Series: &eventsv1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(now.Add(-90 * time.Second))}}
	singleton := &eventsv1.Event{ObjectMeta: created("e.3"), EventTime: metav1.NewMicroTime(now.Add(-5 * time.Second)),
		ReportingController: "ctrl", Regarding: corev1.ObjectReference{Kind: "Deployment", Name: "d"}}
	eventsRow := eventsConvertors[eventsv1.SchemeGroupVersion.WithKind("Event")]
	fromEvents := func(e *eventsv1.Event) func() (metav1.TableRow, error) {
		return func() (metav1.TableRow, error) {
			table, err := eventsRow.(*TableConvertor[*eventsv1.Event]).Row(e, now)
			return table, err
		}
	}
	runRows(t, []rowCase{
		{"core", printed(eventRow, core), []any{"60s", "Warning", "BackOff", "pod/p", "spec.containers{a}", "kubelet, n1", "restarting", "60m", int64(7), "e.1"}},
		{"series", fromEvents(series), []any{"90s", "Normal", "Scheduled", "node", "", "scheduler, s-1", "assigned", "3h", int64(4), "e.2"}},
		{"singleton", fromEvents(singleton), []any{"5s", "", "", "deployment/d", "", "ctrl", "", "5s", int64(1), "e.3"}},
		{"no times", printed(eventRow, &corev1.Event{}), []any{"<unknown>", "", "", "", "", "", "", "<unknown>", int64(1), ""}},
	})
}
