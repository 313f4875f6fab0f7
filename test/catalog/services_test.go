package catalog

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/capstan-io/capstan/internal/testkit"
)

func service(name string, edit func(s *corev1.Service)) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name}, Ports: []corev1.ServicePort{{Port: 80}}}}
	if edit != nil {
		edit(s)
	}
	return s
}

func createService(t *testing.T, c kubernetes.Interface, s *corev1.Service) *corev1.Service {
	t.Helper()
	got, err := c.CoreV1().Services("default").Create(ctx, s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating service %s: %v", s.Name, err)
	}
	return got
}

// assertMessage requires a 422 whose message contains want.
func assertMessage(t *testing.T, err error, want string) {
	t.Helper()
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want 422 with %q", err, want)
	}
}

func ipAddressParent(t *testing.T, c kubernetes.Interface, ip string) string {
	t.Helper()
	obj, err := c.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("IPAddress %s: %v", ip, err)
	}
	return obj.Spec.ParentRef.Namespace + "/" + obj.Spec.ParentRef.Name
}

func TestKubernetesServiceAndServiceCIDR(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	k, err := c.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := k.Spec.Ports[0]
	if k.Spec.ClusterIP != "10.0.0.1" || p.Name != "https" || p.Port != 443 || p.Protocol != corev1.ProtocolTCP ||
		p.TargetPort.IntValue() != int(mustPort(t, s.URL)) || k.Labels["component"] != "apiserver" ||
		*k.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack || k.Spec.IPFamilies[0] != corev1.IPv4Protocol {
		t.Fatalf("kubernetes service: %+v %v", k.Spec, k.Labels)
	}
	if parent := ipAddressParent(t, c, "10.0.0.1"); parent != "default/kubernetes" {
		t.Errorf("IPAddress 10.0.0.1 belongs to %s", parent)
	}
	// Bound to 127.0.0.1: no endpoints, which validation would refuse.
	if _, err := c.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("endpoints of the kubernetes service on loopback: %v", err)
	}
	checkServiceDiscovery(t, c)
	cidr, err := c.NetworkingV1().ServiceCIDRs().Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || len(cidr.Spec.CIDRs) != 1 || cidr.Spec.CIDRs[0] != "10.0.0.0/24" || len(cidr.Status.Conditions) != 1 ||
		cidr.Status.Conditions[0].Status != metav1.ConditionTrue {
		t.Fatalf("default ServiceCIDR: %+v %v", cidr, err)
	}
}

// checkServiceDiscovery checks the discovery entries kubectl relies on.
func checkServiceDiscovery(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	want := map[string]string{
		"v1/services": "svc all", "v1/services/status": "", "v1/endpoints": "ep",
		"networking.k8s.io/v1/ipaddresses": "ip", "networking.k8s.io/v1/servicecidrs": "", "networking.k8s.io/v1/servicecidrs/status": "",
	}
	for _, gv := range []string{"v1", "networking.k8s.io/v1"} {
		list, err := c.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			key := gv + "/" + r.Name
			if w, ok := want[key]; ok {
				if got := strings.Join(append(r.ShortNames, r.Categories...), " "); got != w {
					t.Errorf("%s: short names and categories %q, want %q", key, got, w)
				}
				delete(want, key)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("not in discovery: %v", want)
	}
}

func mustPort(t *testing.T, url string) uint16 {
	t.Helper()
	ap, err := netip.ParseAddrPort(strings.TrimPrefix(url, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	return ap.Port()
}

func TestServiceClusterIPs(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	a := createService(t, c, service("a", nil))
	ip, err := netip.ParseAddr(a.Spec.ClusterIP)
	if err != nil || !netip.MustParsePrefix("10.0.0.0/24").Contains(ip) || a.Spec.ClusterIP == "10.0.0.1" ||
		a.Spec.ClusterIP == "10.0.0.0" || a.Spec.ClusterIP == "10.0.0.255" {
		t.Fatalf("allocated %q", a.Spec.ClusterIP)
	}
	if len(a.Spec.ClusterIPs) != 1 || a.Spec.ClusterIPs[0] != a.Spec.ClusterIP || a.Spec.IPFamilies[0] != corev1.IPv4Protocol ||
		*a.Spec.IPFamilyPolicy != corev1.IPFamilyPolicySingleStack || a.Spec.Type != corev1.ServiceTypeClusterIP ||
		a.Spec.SessionAffinity != corev1.ServiceAffinityNone || a.Spec.Ports[0].TargetPort != intstr.FromInt32(80) ||
		a.Spec.Ports[0].Protocol != corev1.ProtocolTCP || *a.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster {
		t.Fatalf("service: %+v", a.Spec)
	}
	if parent := ipAddressParent(t, c, a.Spec.ClusterIP); parent != "default/a" {
		t.Errorf("IPAddress of a belongs to %s", parent)
	}

	// The explicit IPs below avoid the one a was given at random.
	ipB, ipBad := "10.0.0.50", "10.0.0.60"
	if a.Spec.ClusterIP == ipB || a.Spec.ClusterIP == ipBad {
		ipB, ipBad = "10.0.0.70", "10.0.0.80"
	}
	explicit := func(name, ip string) *corev1.Service {
		return service(name, func(s *corev1.Service) { s.Spec.ClusterIP = ip })
	}
	if b := createService(t, c, explicit("b", ipB)); b.Spec.ClusterIP != ipB {
		t.Fatalf("explicit IP: %s", b.Spec.ClusterIP)
	}
	_, err = c.CoreV1().Services("default").Create(ctx, explicit("dup", ipB), metav1.CreateOptions{})
	assertMessage(t, err, `spec.clusterIPs: Invalid value: ["`+ipB+`"]: failed to allocate IP `+ipB+`: provided IP is already allocated`)
	_, err = c.CoreV1().Services("default").Create(ctx, explicit("out", "10.1.0.5"), metav1.CreateOptions{})
	assertMessage(t, err, "failed to allocate IP 10.1.0.5: the provided network does not match the current range")

	// Deleting releases: the same IP can be had again.
	if err := c.CoreV1().Services("default").Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NetworkingV1().IPAddresses().Get(ctx, ipB, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("IPAddress after delete: %v", err)
	}
	createService(t, c, explicit("b2", ipB))

	// A failed create releases what it allocated.
	bad := explicit("bad", ipBad)
	bad.Spec.Ports = append(bad.Spec.Ports, corev1.ServicePort{Port: 81})
	_, err = c.CoreV1().Services("default").Create(ctx, bad, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.ports[0].name")
	if _, err := c.NetworkingV1().IPAddresses().Get(ctx, ipBad, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("IPAddress of a failed create: %v", err)
	}

	// A dry run allocates nothing.
	before, _ := c.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
	dry, err := c.CoreV1().Services("default").Create(ctx, service("dry", nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || dry.Spec.ClusterIP == "" {
		t.Fatalf("dry run: %v %+v", err, dry)
	}
	after, _ := c.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
	if len(after.Items) != len(before.Items) {
		t.Fatalf("dry run allocated: %d IPAddresses, then %d", len(before.Items), len(after.Items))
	}

	list, err := c.CoreV1().Services("default").List(ctx, metav1.ListOptions{FieldSelector: "spec.clusterIP=" + ipB})
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "b2" {
		t.Fatalf("field selector spec.clusterIP: %v %v", list, err)
	}
	checkReapplyAndDeleteCollection(t, c, a)
}

// checkReapplyAndDeleteCollection: re-sending the original manifest of a
// keeps its allocated IP; deleting a collection releases each IP.
func checkReapplyAndDeleteCollection(t *testing.T, c kubernetes.Interface, a *corev1.Service) {
	t.Helper()
	again := service("a", nil)
	again.ResourceVersion = a.ResourceVersion
	if got, err := c.CoreV1().Services("default").Update(ctx, again, metav1.UpdateOptions{}); err != nil || got.Spec.ClusterIP != a.Spec.ClusterIP {
		t.Fatalf("update without the cluster IP: %v %+v", err, got)
	}

	// client-go's typed client has no DeleteCollection for services.
	err := c.CoreV1().RESTClient().Delete().Namespace("default").Resource("services").
		Param("fieldSelector", "metadata.name!=kubernetes").Do(ctx).Error()
	if err != nil {
		t.Fatal(err)
	}
	ips, err := c.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
	if err != nil || len(ips.Items) != 1 || ips.Items[0].Name != "10.0.0.1" {
		t.Fatalf("IPAddresses after deletecollection: %v %v", ips, err)
	}
}

func TestHeadlessAndExternalNameServices(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	before, _ := c.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
	h := createService(t, c, service("headless", func(s *corev1.Service) { s.Spec.ClusterIP = corev1.ClusterIPNone }))
	if h.Spec.ClusterIP != "None" || len(h.Spec.ClusterIPs) != 1 || h.Spec.ClusterIPs[0] != "None" || h.Spec.IPFamilies[0] != corev1.IPv4Protocol {
		t.Fatalf("headless: %+v", h.Spec)
	}
	e := createService(t, c, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}})
	if e.Spec.ClusterIP != "" || e.Spec.IPFamilies != nil || e.Spec.IPFamilyPolicy != nil || e.Spec.InternalTrafficPolicy != nil {
		t.Fatalf("ExternalName: %+v", e.Spec)
	}
	after, _ := c.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{})
	if len(after.Items) != len(before.Items) {
		t.Fatalf("headless or ExternalName services allocated an IP")
	}
	_, err := c.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "bad-ext"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "not a name"}}, metav1.CreateOptions{})
	assertInvalid(t, err, "spec.externalName")

	// ClusterIP -> ExternalName releases the IP; back allocates a new one.
	svc := createService(t, c, service("flip", nil))
	ip := svc.Spec.ClusterIP
	svc.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com"}
	svc, err = c.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{})
	if err != nil || svc.Spec.ClusterIP != "" {
		t.Fatalf("to ExternalName: %v %+v", err, svc)
	}
	if _, err := c.NetworkingV1().IPAddresses().Get(ctx, ip, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("IPAddress after the change to ExternalName: %v", err)
	}
	svc.Spec = service("flip", nil).Spec
	if svc, err = c.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{}); err != nil || svc.Spec.ClusterIP == "" {
		t.Fatalf("back to ClusterIP: %v %+v", err, svc)
	}

	// The cluster IP is immutable (the new one must differ: the allocator
	// picks at random).
	other := "10.0.0.99"
	if svc.Spec.ClusterIP == other {
		other = "10.0.0.98"
	}
	svc.Spec.ClusterIP, svc.Spec.ClusterIPs = other, []string{other}
	_, err = c.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{})
	assertMessage(t, err, "spec.clusterIPs[0]: Invalid value")
}

func TestServiceNodePorts(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	np := createService(t, c, service("np", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }))
	port := np.Spec.Ports[0].NodePort
	if port < 30000 || port > 32767 || np.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Fatalf("node port service: %+v", np.Spec)
	}
	withPort := func(name string, port int32) *corev1.Service {
		return service(name, func(s *corev1.Service) {
			s.Spec.Type = corev1.ServiceTypeNodePort
			s.Spec.Ports[0].NodePort = port
		})
	}
	_, err := c.CoreV1().Services("default").Create(ctx, withPort("dup", port), metav1.CreateOptions{})
	assertMessage(t, err, "spec.ports[0].nodePort: Invalid value: ")
	assertMessage(t, err, "provided port is already allocated")
	_, err = c.CoreV1().Services("default").Create(ctx, withPort("out", 80), metav1.CreateOptions{})
	assertMessage(t, err, "provided port is not in the valid range. The range of valid ports is 30000-32767")

	// NodePort -> ClusterIP releases the port.
	np.Spec.Type = corev1.ServiceTypeClusterIP
	if _, err := c.CoreV1().Services("default").Update(ctx, np, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := createService(t, c, withPort("np2", port)); got.Spec.Ports[0].NodePort != port {
		t.Fatalf("the released port: %+v", got.Spec.Ports)
	}
	// Deleting releases too.
	if err := c.CoreV1().Services("default").Delete(ctx, "np2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createService(t, c, withPort("np3", port))

	checkFinalizedServiceReleases(t, c)

	lb := createService(t, c, service("lb", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer }))
	if lb.Spec.Ports[0].NodePort == 0 || !*lb.Spec.AllocateLoadBalancerNodePorts || lb.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
		t.Fatalf("load balancer: %+v", lb.Spec)
	}
}

func TestServicesRestartAndFlags(t *testing.T) {
	s := testkit.StartServer(t, "--service-cluster-ip-range=10.96.0.0/28", "--service-node-port-range=31000-31010")
	c := s.Client(t)
	np := createService(t, c, service("keep", func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }))
	ip, port := np.Spec.ClusterIP, np.Spec.Ports[0].NodePort
	if !netip.MustParsePrefix("10.96.0.0/28").Contains(netip.MustParseAddr(ip)) || port < 31000 || port > 31010 {
		t.Fatalf("allocated %s and %d", ip, port)
	}
	s.Restart(t)
	c = s.Client(t)
	k, err := c.CoreV1().Services("default").Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || k.Spec.ClusterIP != "10.96.0.1" {
		t.Fatalf("kubernetes service after restart: %v %v", k, err)
	}
	dup := service("dup", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.ClusterIP = ip
	})
	_, err = c.CoreV1().Services("default").Create(ctx, dup, metav1.CreateOptions{})
	assertMessage(t, err, "provided IP is already allocated")
	dup.Spec.ClusterIP, dup.Spec.Ports[0].NodePort = "", port
	_, err = c.CoreV1().Services("default").Create(ctx, dup, metav1.CreateOptions{})
	assertMessage(t, err, "provided port is already allocated")
	ips, err := c.NetworkingV1().IPAddresses().List(ctx, metav1.ListOptions{LabelSelector: networkingv1.LabelManagedBy + "=ipallocator.k8s.io"})
	if err != nil || len(ips.Items) != 2 {
		t.Fatalf("IPAddresses after restart: %v %v", ips, err)
	}
}

func TestEndpoints(t *testing.T) {
	s := testkit.StartServer(t)
	c := s.Client(t)
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Subsets: []corev1.EndpointSubset{{
		Addresses: []corev1.EndpointAddress{{IP: "10.244.0.5"}}, Ports: []corev1.EndpointPort{{Port: 8080}},
	}}}
	got, err := c.CoreV1().Endpoints("default").Create(ctx, ep, metav1.CreateOptions{})
	if err != nil || got.Subsets[0].Ports[0].Protocol != corev1.ProtocolTCP {
		t.Fatalf("endpoints: %v %+v", err, got)
	}
	ep.Name = "loop"
	ep.Subsets[0].Addresses[0].IP = "127.0.0.1"
	_, err = c.CoreV1().Endpoints("default").Create(ctx, ep, metav1.CreateOptions{})
	assertMessage(t, err, "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)")
}

func TestDualStackServices(t *testing.T) {
	s := testkit.StartServer(t, "--service-cluster-ip-range=10.0.0.0/24,fd00::/108")
	c := s.Client(t)
	single := createService(t, c, service("single", nil))
	if len(single.Spec.ClusterIPs) != 1 || single.Spec.IPFamilies[0] != corev1.IPv4Protocol {
		t.Fatalf("single stack: %+v", single.Spec)
	}
	prefer := corev1.IPFamilyPolicyPreferDualStack
	dual := createService(t, c, service("dual", func(s *corev1.Service) { s.Spec.IPFamilyPolicy = &prefer }))
	if len(dual.Spec.ClusterIPs) != 2 || !strings.Contains(dual.Spec.ClusterIPs[1], ":") ||
		dual.Spec.IPFamilies[1] != corev1.IPv6Protocol {
		t.Fatalf("dual stack: %+v", dual.Spec)
	}
	v6 := createService(t, c, service("v6", func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} }))
	if len(v6.Spec.ClusterIPs) != 1 || !netip.MustParsePrefix("fd00::/108").Contains(netip.MustParseAddr(v6.Spec.ClusterIP)) {
		t.Fatalf("IPv6 service: %+v", v6.Spec)
	}
	// Downgrading releases the secondary IP.
	single6 := corev1.IPFamilyPolicySingleStack
	dual.Spec.IPFamilyPolicy = &single6
	if _, err := c.CoreV1().Services("default").Update(ctx, dual, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NetworkingV1().IPAddresses().Get(ctx, dual.Spec.ClusterIPs[1], metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("secondary IP after the downgrade: %v", err)
	}
}

func TestKubernetesServiceEndpoints(t *testing.T) {
	ip, err := utilnet.ChooseHostInterface()
	if err != nil || ip.IsLoopback() {
		t.Skipf("no address but loopback to advertise: %v", err)
	}
	s := testkit.StartServer(t, "--bind-address="+ip.String(), "--advertise-address="+ip.String())
	c := s.Client(t)
	var ep *corev1.Endpoints
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		ep, err = c.CoreV1().Endpoints("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("no endpoints for the kubernetes service: %v", err)
	}
	sub := ep.Subsets[0]
	if len(ep.Subsets) != 1 || len(sub.Addresses) != 1 || sub.Addresses[0].IP != ip.String() || sub.Ports[0].Name != "https" ||
		int(sub.Ports[0].Port) != int(mustPort(t, s.URL)) || ep.Labels["endpointslice.kubernetes.io/skip-mirror"] != "true" {
		t.Fatalf("endpoints: %+v", ep)
	}
	// The EndpointSlice, where discovery.k8s.io is served.
	if _, err := c.Discovery().ServerResourcesForGroupVersion("discovery.k8s.io/v1"); err != nil {
		return
	}
	var slice *discoveryv1.EndpointSlice
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		slice, err = c.DiscoveryV1().EndpointSlices("default").Get(ctx, "kubernetes", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil || len(slice.Endpoints) != 1 || slice.Endpoints[0].Addresses[0] != ip.String() ||
		slice.Labels["kubernetes.io/service-name"] != "kubernetes" || *slice.Ports[0].Port != sub.Ports[0].Port {
		t.Fatalf("endpoint slice: %+v %v", slice, err)
	}
}

// checkFinalizedServiceReleases: a service held by a finalizer keeps its
// IP and node port until the update removing the finalizer deletes it.
func checkFinalizedServiceReleases(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	svc := createService(t, c, service("held", func(s *corev1.Service) {
		s.Finalizers = []string{"example.com/hold"}
		s.Spec.Type = corev1.ServiceTypeNodePort
	}))
	if err := c.CoreV1().Services("default").Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if parent := ipAddressParent(t, c, svc.Spec.ClusterIP); parent != "default/held" {
		t.Fatalf("IPAddress of a service held by a finalizer belongs to %s", parent)
	}
	svc, err := c.CoreV1().Services("default").Get(ctx, "held", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Finalizers = nil
	if _, err := c.CoreV1().Services("default").Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.NetworkingV1().IPAddresses().Get(ctx, svc.Spec.ClusterIP, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("IPAddress after the finalizer went: %v", err)
	}
	again := service("again", func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports[0].NodePort = svc.Spec.Ports[0].NodePort
	})
	createService(t, c, again)
}
