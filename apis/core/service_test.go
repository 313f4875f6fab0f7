package core

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestDefaultService(t *testing.T) {
	cases := []struct {
		name  string
		in    corev1.Service
		check func(t *testing.T, s *corev1.Service)
	}{
		{"cluster ip", corev1.Service{Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}, {Port: 53, TargetPort: intstr.FromString("dns")}}}},
			func(t *testing.T, s *corev1.Service) {
				if s.Spec.Type != corev1.ServiceTypeClusterIP || s.Spec.SessionAffinity != corev1.ServiceAffinityNone ||
					s.Spec.Ports[0].Protocol != corev1.ProtocolTCP || s.Spec.Ports[0].TargetPort != intstr.FromInt32(80) ||
					s.Spec.Ports[1].TargetPort != intstr.FromString("dns") || *s.Spec.InternalTrafficPolicy != corev1.ServiceInternalTrafficPolicyCluster ||
					s.Spec.ExternalTrafficPolicy != "" || s.Spec.AllocateLoadBalancerNodePorts != nil {
					t.Errorf("defaults: %+v", s.Spec)
				}
			}},
		{"load balancer", corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}, {Hostname: "x"}}}}},
			func(t *testing.T, s *corev1.Service) {
				if s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster || !*s.Spec.AllocateLoadBalancerNodePorts ||
					*s.Status.LoadBalancer.Ingress[0].IPMode != corev1.LoadBalancerIPModeVIP || s.Status.LoadBalancer.Ingress[1].IPMode != nil {
					t.Errorf("defaults: %+v %+v", s.Spec, s.Status)
				}
			}},
		{"external name", corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}},
			func(t *testing.T, s *corev1.Service) {
				if s.Spec.InternalTrafficPolicy != nil || s.Spec.ExternalTrafficPolicy != "" {
					t.Errorf("defaults: %+v", s.Spec)
				}
			}},
		{"client ip affinity", corev1.Service{Spec: corev1.ServiceSpec{SessionAffinity: corev1.ServiceAffinityClientIP}},
			func(t *testing.T, s *corev1.Service) {
				if *s.Spec.SessionAffinityConfig.ClientIP.TimeoutSeconds != 10800 {
					t.Errorf("defaults: %+v", s.Spec.SessionAffinityConfig)
				}
			}},
		{"no affinity drops config", corev1.Service{Spec: corev1.ServiceSpec{SessionAffinityConfig: &corev1.SessionAffinityConfig{}}},
			func(t *testing.T, s *corev1.Service) {
				if s.Spec.SessionAffinityConfig != nil {
					t.Errorf("defaults: %+v", s.Spec.SessionAffinityConfig)
				}
			}},
		{"external IPs make the policy", corev1.Service{Spec: corev1.ServiceSpec{ExternalIPs: []string{"1.2.3.4"}}},
			func(t *testing.T, s *corev1.Service) {
				if s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyCluster {
					t.Errorf("defaults: %+v", s.Spec)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := c.in.DeepCopy()
			DefaultService(s)
			c.check(t, s)
		})
	}
}

// validService is a defaulted ClusterIP service with an allocated IP.
func validService(edit func(s *corev1.Service)) *corev1.Service {
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"}, ClusterIP: "10.0.0.10", ClusterIPs: []string{"10.0.0.10"},
			IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr(corev1.IPFamilyPolicySingleStack),
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}},
		},
	}
	if edit != nil {
		edit(s)
	}
	DefaultService(s)
	return s
}

func TestValidateService(t *testing.T) {
	cases := []struct {
		name string
		edit func(s *corev1.Service)
		want []wantErr
	}{
		{"valid", nil, nil},
		{"no ports", func(s *corev1.Service) { s.Spec.Ports = nil }, []wantErr{req("spec.ports")}},
		{"headless without ports", func(s *corev1.Service) {
			s.Spec.Ports, s.Spec.ClusterIP, s.Spec.ClusterIPs = nil, "None", []string{"None"}
		}, nil},
		{"unnamed of two", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Port: 81}}
		}, []wantErr{req("spec.ports[1].name")}},
		{"duplicate names", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "a", Port: 81}}
		}, []wantErr{{"FieldValueDuplicate", "spec.ports[1].name"}}},
		{"bad name, port, protocol", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "A_b", Port: 70000, Protocol: "ICMP", TargetPort: intstr.FromInt32(1)}}
		}, []wantErr{inv("spec.ports[0].name"), inv("spec.ports[0].port"), {"FieldValueNotSupported", "spec.ports[0].protocol"}}},
		{"same port twice", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80}, {Name: "b", Port: 80}}
		}, []wantErr{{"FieldValueDuplicate", "spec.ports[1]"}}},
		{"same port, two protocols", func(s *corev1.Service) {
			s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 53}, {Name: "b", Port: 53, Protocol: corev1.ProtocolUDP}}
		}, nil},
		{"node port on cluster ip", func(s *corev1.Service) { s.Spec.Ports[0].NodePort = 30001 }, []wantErr{forb("spec.ports[0].nodePort")}},
		{"bad selector", func(s *corev1.Service) { s.Spec.Selector = map[string]string{"a b": "c"} }, []wantErr{inv("spec.selector")}},
		{"unknown type", func(s *corev1.Service) { s.Spec.Type = "Magic" }, []wantErr{{"FieldValueNotSupported", "spec.type"}}},
		{"headless node port", func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ServiceTypeNodePort, "None", []string{"None"}
		}, []wantErr{inv("spec.clusterIPs[0]")}},
		{"bad external name", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "Not A Name"}
		}, []wantErr{inv("spec.externalName")}},
		{"external name with a trailing dot", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com."}
		}, nil},
		{"external name with cluster IPs", func(s *corev1.Service) {
			s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
		}, []wantErr{forb("spec.clusterIPs"), forb("spec.ipFamilies"), forb("spec.ipFamilyPolicy")}},
		{"clusterIPs out of step", func(s *corev1.Service) { s.Spec.ClusterIPs = []string{"10.0.0.11"} }, []wantErr{inv("spec.clusterIPs")}},
		{"invalid cluster IP", func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.300", []string{"10.0.0.300"}
		}, []wantErr{inv("spec.clusterIPs[0]")}},
		{"IPv6 IP for IPv4 family", func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "fd00::1", []string{"fd00::1"}
		}, []wantErr{inv("spec.clusterIPs[0]")}},
		{"client IP affinity timeout", func(s *corev1.Service) {
			s.Spec.SessionAffinity = corev1.ServiceAffinityClientIP
			s.Spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr[int32](86401)}}
		}, []wantErr{inv("spec.sessionAffinityConfig.clientIP.timeoutSeconds")}},
		{"loopback external IP", func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"127.0.0.1"} }, []wantErr{inv("spec.externalIPs[0]")}},
		{"local policy on cluster ip", func(s *corev1.Service) {
			s.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
		}, []wantErr{inv("spec.externalTrafficPolicy")}},
		{"source ranges on cluster ip", func(s *corev1.Service) {
			s.Spec.LoadBalancerSourceRanges = []string{"10.0.0.0/8"}
		}, []wantErr{forb("spec.LoadBalancerSourceRanges")}},
		{"load balancer class on cluster ip", func(s *corev1.Service) { s.Spec.LoadBalancerClass = ptr("x.io/lb") }, []wantErr{forb("spec.loadBalancerClass")}},
		{"health check port without local policy", func(s *corev1.Service) { s.Spec.HealthCheckNodePort = 30000 }, []wantErr{inv("spec.healthCheckNodePort")}},
		{"unknown traffic distribution", func(s *corev1.Service) { s.Spec.TrafficDistribution = ptr("Anywhere") },
			[]wantErr{{"FieldValueNotSupported", "spec.trafficDistribution"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkErrs(t, ServiceStrategy{}.Validate(context.Background(), validService(c.edit)), c.want...)
		})
	}
}

func TestValidateServiceMessages(t *testing.T) {
	s := validService(func(s *corev1.Service) {
		s.Spec.Type, s.Spec.ClusterIP, s.Spec.ClusterIPs = corev1.ServiceTypeLoadBalancer, "None", []string{"None"}
	})
	errs := ServiceStrategy{}.Validate(context.Background(), s)
	checkDetail(t, errs, "may not be set to 'None' for LoadBalancer services")
	s = validService(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer })
	s.Spec.AllocateLoadBalancerNodePorts = nil
	// kube reports this path without its "spec." prefix.
	checkErrs(t, ServiceStrategy{}.Validate(context.Background(), s), req("allocateLoadBalancerNodePorts"))
}

func TestValidateServiceUpdate(t *testing.T) {
	old := validService(nil)
	cases := []struct {
		name string
		edit func(s *corev1.Service)
		want []wantErr
	}{
		{"unchanged", nil, nil},
		{"cluster IP changed", func(s *corev1.Service) {
			s.Spec.ClusterIP, s.Spec.ClusterIPs = "10.0.0.11", []string{"10.0.0.11"}
		}, []wantErr{inv("spec.clusterIPs[0]")}},
		{"primary cluster IP unset", func(s *corev1.Service) { s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil }, []wantErr{inv("spec.clusterIPs[0]")}},
		{"family changed", func(s *corev1.Service) { s.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} },
			[]wantErr{inv("spec.ipFamilies[0]"), inv("spec.clusterIPs[0]")}},
		{"to external name", func(s *corev1.Service) {
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "example.com", SessionAffinity: corev1.ServiceAffinityNone}
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := old.DeepCopy()
			if c.edit != nil {
				c.edit(s)
			}
			checkErrs(t, ServiceStrategy{}.ValidateUpdate(context.Background(), s, old), c.want...)
		})
	}
}

func TestDropTypeDependentFields(t *testing.T) {
	old := validService(func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeLoadBalancer
		s.Spec.Ports[0].NodePort = 30080
	})
	// ExternalName, touching nothing else: the allocated values go.
	s := old.DeepCopy()
	s.Spec.Type, s.Spec.ExternalName = corev1.ServiceTypeExternalName, "example.com"
	ServiceStrategy{}.PrepareForUpdate(context.Background(), s, old)
	if s.Spec.ClusterIP != "" || s.Spec.ClusterIPs != nil || s.Spec.IPFamilies != nil || s.Spec.IPFamilyPolicy != nil ||
		s.Spec.Ports[0].NodePort != 0 || s.Spec.ExternalTrafficPolicy != "" || s.Spec.AllocateLoadBalancerNodePorts != nil {
		t.Errorf("to ExternalName: %+v", s.Spec)
	}
	// A node port the client adds is its own: kept for validation to judge.
	s = old.DeepCopy()
	s.Spec.Type = corev1.ServiceTypeClusterIP
	s.Spec.Ports[0].NodePort = 30081
	ServiceStrategy{}.PrepareForUpdate(context.Background(), s, old)
	if s.Spec.Ports[0].NodePort != 30081 || s.Spec.ClusterIP != "10.0.0.10" {
		t.Errorf("to ClusterIP with a new node port: %+v", s.Spec)
	}
}

func TestNormalizeClusterIPs(t *testing.T) {
	cases := []struct {
		name         string
		old          *corev1.Service
		ip           string
		ips, wantIPs []string
	}{
		{"create with clusterIP only", nil, "10.0.0.5", nil, []string{"10.0.0.5"}},
		{"create with nothing", nil, "", nil, nil},
		{"update dropping clusterIPs", validService(nil), "10.0.0.10", nil, []string{"10.0.0.10"}},
		{"update clearing clusterIP", validService(nil), "", []string{"10.0.0.10"}, nil},
		{"update changing clusterIP", validService(nil), "10.0.0.11", []string{"10.0.0.10"}, []string{"10.0.0.11"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &corev1.Service{Spec: corev1.ServiceSpec{ClusterIP: c.ip, ClusterIPs: c.ips}}
			normalizeClusterIPs(s, c.old)
			if !equality.Semantic.DeepEqual(s.Spec.ClusterIPs, c.wantIPs) {
				t.Errorf("clusterIPs = %v, want %v", s.Spec.ClusterIPs, c.wantIPs)
			}
		})
	}
}

func TestPatchAllocatedValues(t *testing.T) {
	old := validService(func(s *corev1.Service) {
		s.Spec.Type = corev1.ServiceTypeNodePort
		s.Spec.Ports = []corev1.ServicePort{{Name: "a", Port: 80, NodePort: 30080}, {Name: "b", Port: 81, NodePort: 30081}}
	})
	s := old.DeepCopy()
	s.Spec.ClusterIP, s.Spec.ClusterIPs = "", nil
	s.Spec.Ports[0].NodePort, s.Spec.Ports[1].NodePort = 0, 30080 // b takes a's port
	patchAllocatedValues(s, old)
	if s.Spec.ClusterIP != "10.0.0.10" || s.Spec.Ports[0].NodePort != 0 || s.Spec.Ports[1].NodePort != 30080 {
		t.Errorf("patched: %+v", s.Spec)
	}
	s = old.DeepCopy()
	s.Spec.Ports[1].NodePort = 0
	patchAllocatedValues(s, old)
	if s.Spec.Ports[1].NodePort != 30081 {
		t.Errorf("node port not restored: %+v", s.Spec.Ports)
	}
}

func TestServiceWarnings(t *testing.T) {
	s := validService(func(s *corev1.Service) {
		s.Spec.ClusterIP, s.Spec.ClusterIPs = "None", []string{"None"}
		s.Spec.ExternalIPs = []string{"1.2.3.4"}
		s.Spec.ExternalName = "x.example"
	})
	got := strings.Join(ServiceStrategy{}.WarningsOnCreate(context.Background(), s), "\n")
	for _, want := range []string{"spec.externalIPs is ignored for headless services", `spec.externalName is ignored when spec.type is not "ExternalName"`} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
}
