package core

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/capstan-io/capstan/registry"
)

// ServiceStrategy is the strategy of the services resource. Cluster IPs and
// node ports are allocated by ServiceREST around the Store, not here.
type ServiceStrategy struct{}

var (
	_ registry.Strategy         = ServiceStrategy{}
	_ registry.Defaulter        = ServiceStrategy{}
	_ registry.FieldSelectable  = ServiceStrategy{}
	_ registry.NameValidator    = ServiceStrategy{}
	_ registry.CreateOnUpdater  = ServiceStrategy{}
	_ registry.WarningsOnCreate = ServiceStrategy{}
	_ registry.WarningsOnUpdate = ServiceStrategy{}
)

// NamespaceScoped is true.
func (ServiceStrategy) NamespaceScoped() bool { return true }

// Default applies kube's v1 service defaults.
func (ServiceStrategy) Default(obj runtime.Object) { DefaultService(obj.(*corev1.Service)) }

// AllowCreateOnUpdate is true: a PUT of a missing service creates it.
func (ServiceStrategy) AllowCreateOnUpdate() bool { return true }

// ValidateName accepts DNS labels, as kube's relaxed service names (GA in
// 1.37) do.
func (ServiceStrategy) ValidateName(name string, prefix bool) []string {
	return apivalidation.NameIsDNSLabel(name, prefix)
}

// PrepareForCreate resets the status.
func (ServiceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*corev1.Service).Status = corev1.ServiceStatus{}
}

// PrepareForUpdate keeps the status and clears the fields a type change
// made meaningless, when the client left them as they were.
func (ServiceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
	svc.Status = oldSvc.Status
	dropTypeDependentFields(svc, oldSvc)
}

// Validate validates a new service.
func (ServiceStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validateService(obj.(*corev1.Service), nil)
}

// ValidateUpdate validates an update of a service.
func (ServiceStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	return ValidateServiceUpdate(obj.(*corev1.Service), old.(*corev1.Service))
}

// WarningsOnCreate returns kube's service warnings.
func (ServiceStrategy) WarningsOnCreate(_ context.Context, obj runtime.Object) []string {
	return serviceWarnings(obj.(*corev1.Service))
}

// WarningsOnUpdate returns kube's service warnings.
func (ServiceStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	return serviceWarnings(obj.(*corev1.Service))
}

// Fields adds spec.clusterIP and spec.type to the field selectors.
func (ServiceStrategy) Fields(obj runtime.Object) fields.Set {
	svc := obj.(*corev1.Service)
	return fields.Set{"spec.clusterIP": svc.Spec.ClusterIP, "spec.type": string(svc.Spec.Type)}
}

// ServiceStatusStrategy is the strategy of services/status: an update
// changes the status only.
type ServiceStatusStrategy struct{ ServiceStrategy }

// PrepareForUpdate keeps the spec.
func (ServiceStatusStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*corev1.Service).Spec = old.(*corev1.Service).Spec
}

// ValidateUpdate validates the load balancer status.
func (ServiceStatusStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	svc, oldSvc := obj.(*corev1.Service), old.(*corev1.Service)
	return validateLoadBalancerStatus(&svc.Status.LoadBalancer, &oldSvc.Status.LoadBalancer,
		field.NewPath("status", "loadBalancer"), &svc.Spec)
}

// WarningsOnUpdate warns of load balancer ingress IPs that are not canonical.
func (ServiceStatusStrategy) WarningsOnUpdate(_ context.Context, obj, _ runtime.Object) []string {
	svc := obj.(*corev1.Service)
	var warnings []string
	path := field.NewPath("status", "loadBalancer", "ingress")
	for i, ing := range svc.Status.LoadBalancer.Ingress {
		if ing.IP != "" {
			warnings = append(warnings, ipWarnings(path.Index(i), ing.IP)...)
		}
	}
	return warnings
}

// DefaultService applies kube's v1 defaults: ClusterIP type, no session
// affinity (ClientIP gets a 3h timeout), TCP ports targeting their own
// port, the Cluster traffic policies, node ports for load balancers and the
// VIP mode of load balancer ingress IPs.
func DefaultService(svc *corev1.Service) {
	spec := &svc.Spec
	if spec.SessionAffinity == "" {
		spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	switch spec.SessionAffinity {
	case corev1.ServiceAffinityNone:
		spec.SessionAffinityConfig = nil
	case corev1.ServiceAffinityClientIP:
		c := spec.SessionAffinityConfig
		if c == nil || c.ClientIP == nil || c.ClientIP.TimeoutSeconds == nil {
			spec.SessionAffinityConfig = &corev1.SessionAffinityConfig{
				ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr(corev1.DefaultClientIPServiceAffinitySeconds)}}
		}
	}
	if spec.Type == "" {
		spec.Type = corev1.ServiceTypeClusterIP
	}
	for i := range spec.Ports {
		p := &spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if externallyAccessible(svc) && spec.ExternalTrafficPolicy == "" {
		spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyCluster
	}
	if spec.InternalTrafficPolicy == nil && (spec.Type == corev1.ServiceTypeClusterIP ||
		spec.Type == corev1.ServiceTypeNodePort || spec.Type == corev1.ServiceTypeLoadBalancer) {
		spec.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if spec.Type == corev1.ServiceTypeLoadBalancer {
		if spec.AllocateLoadBalancerNodePorts == nil {
			spec.AllocateLoadBalancerNodePorts = ptr(true)
		}
		for i, ing := range svc.Status.LoadBalancer.Ingress {
			if ing.IP != "" && ing.IPMode == nil {
				svc.Status.LoadBalancer.Ingress[i].IPMode = ptr(corev1.LoadBalancerIPModeVIP)
			}
		}
	}
}

// externallyAccessible: node ports, load balancers and cluster IPs with
// external IPs are reachable from outside the cluster.
func externallyAccessible(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeClusterIP:
		return len(svc.Spec.ExternalIPs) > 0
	}
	return false
}

// needsHealthCheck: a load balancer keeping traffic local needs a health
// check node port.
func needsHealthCheck(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal
}

// needsClusterIP: every type but ExternalName has a cluster IP ("None"
// counts).
func needsClusterIP(svc *corev1.Service) bool {
	return svc.Spec.Type != corev1.ServiceTypeExternalName
}

// needsNodePort: node port services and load balancers that allocate them.
func needsNodePort(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	}
	return false
}

// isHeadless: clusterIPs is exactly ["None"].
func isHeadless(svc *corev1.Service) bool {
	return svc != nil && len(svc.Spec.ClusterIPs) == 1 && svc.Spec.ClusterIPs[0] == corev1.ClusterIPNone
}

// dropTypeDependentFields clears, on an update that changes the type, the
// fields the new type does not use and the client did not touch (allocated
// values are released by ServiceREST), as kube's strategy does.
func dropTypeDependentFields(svc, old *corev1.Service) {
	if needsClusterIP(old) && !needsClusterIP(svc) {
		if sameClusterIPs(old, svc) {
			svc.Spec.ClusterIP, svc.Spec.ClusterIPs = "", nil
		}
		if slices.Equal(old.Spec.IPFamilies, svc.Spec.IPFamilies) {
			svc.Spec.IPFamilies = nil
		}
		if equality.Semantic.DeepEqual(old.Spec.IPFamilyPolicy, svc.Spec.IPFamilyPolicy) {
			svc.Spec.IPFamilyPolicy = nil
		}
	}
	if needsNodePortType(old) && !needsNodePortType(svc) && nodePortSet(old).IsSuperset(nodePortSet(svc)) {
		for i := range svc.Spec.Ports {
			svc.Spec.Ports[i].NodePort = 0
		}
	}
	if needsHealthCheck(old) && !needsHealthCheck(svc) && old.Spec.HealthCheckNodePort == svc.Spec.HealthCheckNodePort {
		svc.Spec.HealthCheckNodePort = 0
	}
	wasLB, isLB := old.Spec.Type == corev1.ServiceTypeLoadBalancer, svc.Spec.Type == corev1.ServiceTypeLoadBalancer
	if wasLB && !isLB {
		a, b := old.Spec.AllocateLoadBalancerNodePorts, svc.Spec.AllocateLoadBalancerNodePorts
		if a != nil && b != nil && *a == *b {
			svc.Spec.AllocateLoadBalancerNodePorts = nil
		}
		if equality.Semantic.DeepEqual(old.Spec.LoadBalancerClass, svc.Spec.LoadBalancerClass) {
			svc.Spec.LoadBalancerClass = nil
		}
	}
	if externallyAccessible(old) && !externallyAccessible(svc) && old.Spec.ExternalTrafficPolicy == svc.Spec.ExternalTrafficPolicy {
		svc.Spec.ExternalTrafficPolicy = ""
	}
	if !isLB {
		svc.Status.LoadBalancer = corev1.LoadBalancerStatus{}
	}
}

// needsNodePortType is kube's strategy's test: the type alone decides.
func needsNodePortType(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer
}

func sameClusterIPs(a, b *corev1.Service) bool {
	return a.Spec.ClusterIP == b.Spec.ClusterIP && slices.Equal(a.Spec.ClusterIPs, b.Spec.ClusterIPs)
}

// nodePortSet is the set of the node ports a service's ports name.
func nodePortSet(svc *corev1.Service) sets.Set[int32] {
	out := sets.New[int32]()
	for _, p := range svc.Spec.Ports {
		if p.NodePort != 0 {
			out.Insert(p.NodePort)
		}
	}
	return out
}
