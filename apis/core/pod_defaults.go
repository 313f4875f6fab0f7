package core

import (
	// The image reference parser checks digests with the hashes it finds
	// registered; kube registers these two.
	_ "crypto/sha256"
	_ "crypto/sha512"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
)

// The defaults kube's scheme applies to a v1 PodSpec and everything it
// holds, and the few it applies to a Pod only. What a created pod shows
// beyond them comes from elsewhere: status.phase Pending and status.qosClass
// from the pod strategy; spec.priority, spec.preemptionPolicy
// (PreemptLowerPriority) from the Priority admission plugin; the
// node.kubernetes.io/not-ready and unreachable tolerations from the
// DefaultTolerationSeconds admission plugin; serviceAccountName default and
// the kube-api-access volume from the ServiceAccount admission plugin.

// DefaultPod applies kube's defaults to a pod: those of its spec, the ones
// kube keeps for pods and never applies to templates (requests from limits,
// enableServiceLinks, host ports under hostNetwork, a negative grace period
// made 1), and those of its status.
func DefaultPod(pod *corev1.Pod) {
	spec := &pod.Spec
	if g := spec.TerminationGracePeriodSeconds; g != nil && *g < 0 {
		spec.TerminationGracePeriodSeconds = ptr[int64](1)
	}
	for i := range spec.Containers {
		defaultRequestsToLimits(&spec.Containers[i].Resources)
	}
	for i := range spec.InitContainers {
		defaultRequestsToLimits(&spec.InitContainers[i].Resources)
	}
	if spec.EnableServiceLinks == nil {
		spec.EnableServiceLinks = ptr(corev1.DefaultEnableServiceLinks)
	}
	if spec.HostNetwork {
		defaultHostPorts(spec.Containers)
		defaultHostPorts(spec.InitContainers)
	}
	defaultPodSpec(spec)
	defaultPodStatus(&pod.Status)
}

// defaultRequestsToLimits copies each limit without a request into requests.
func defaultRequestsToLimits(r *corev1.ResourceRequirements) {
	if r.Limits == nil {
		return
	}
	if r.Requests == nil {
		r.Requests = corev1.ResourceList{}
	}
	for name, q := range r.Limits {
		if _, ok := r.Requests[name]; !ok {
			r.Requests[name] = q.DeepCopy()
		}
	}
}

// defaultHostPorts makes each container port a host port, as a pod on the
// host network listens on the node.
func defaultHostPorts(containers []corev1.Container) {
	for i := range containers {
		for j := range containers[i].Ports {
			p := &containers[i].Ports[j]
			if p.HostPort == 0 {
				p.HostPort = p.ContainerPort
			}
		}
	}
}

// defaultPodStatus keeps podIP and podIPs in step: podIP wins when they
// disagree, as older kubelets only write it.
func defaultPodStatus(s *corev1.PodStatus) {
	switch {
	case s.PodIP != "" && (len(s.PodIPs) == 0 || s.PodIPs[0].IP != s.PodIP):
		s.PodIPs = []corev1.PodIP{{IP: s.PodIP}}
	case s.PodIP == "" && len(s.PodIPs) > 0:
		s.PodIP = s.PodIPs[0].IP
	}
	roundResourceList(s.AllocatedResources)
	roundRequirements(s.Resources)
	for _, list := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses, s.EphemeralContainerStatuses} {
		for i := range list {
			roundResourceList(list[i].AllocatedResources)
			roundRequirements(list[i].Resources)
		}
	}
}

// defaultPodSpec applies the defaults of a pod spec, shared by pods and
// every pod template.
func defaultPodSpec(spec *corev1.PodSpec) {
	// serviceAccount is the deprecated alias of serviceAccountName.
	if spec.ServiceAccountName == "" {
		spec.ServiceAccountName = spec.DeprecatedServiceAccount //nolint:staticcheck // kept in step on purpose
	}
	spec.DeprecatedServiceAccount = spec.ServiceAccountName //nolint:staticcheck // kept in step on purpose
	if spec.DNSPolicy == "" {
		spec.DNSPolicy = corev1.DNSClusterFirst
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyAlways
	}
	if spec.SecurityContext == nil {
		spec.SecurityContext = &corev1.PodSecurityContext{}
	}
	if spec.TerminationGracePeriodSeconds == nil {
		spec.TerminationGracePeriodSeconds = ptr[int64](corev1.DefaultTerminationGracePeriodSeconds)
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = corev1.DefaultSchedulerName
	}
	for i := range spec.Volumes {
		defaultVolume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		defaultContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		defaultContainer(&spec.Containers[i])
	}
	for i := range spec.EphemeralContainers {
		defaultContainer((*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon))
	}
	roundResourceList(spec.Overhead)
	roundRequirements(spec.Resources)
}

// defaultContainer applies the defaults of a container of any kind.
func defaultContainer(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = pullPolicyFor(c.Image)
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for i := range c.Env {
		defaultEnvSource(c.Env[i].ValueFrom)
	}
	roundResourceList(c.Resources.Limits)
	roundResourceList(c.Resources.Requests)
	defaultProbe(c.LivenessProbe)
	defaultProbe(c.ReadinessProbe)
	defaultProbe(c.StartupProbe)
	if c.Lifecycle != nil {
		if c.Lifecycle.PostStart != nil {
			defaultHTTPGet(c.Lifecycle.PostStart.HTTPGet)
		}
		if c.Lifecycle.PreStop != nil {
			defaultHTTPGet(c.Lifecycle.PreStop.HTTPGet)
		}
	}
}

// pullPolicyFor is kube's default pull policy of an image: Always for the
// latest tag, written or implied, IfNotPresent for any other tag, a digest
// or a reference that does not parse.
func pullPolicyFor(image string) corev1.PullPolicy {
	if imageTag(image) == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// imageTag returns the tag of an image reference: "latest" when it names
// neither a tag nor a digest, "" when it does not parse.
func imageTag(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return ""
	}
	tag := ""
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if _, ok := named.(reference.Digested); !ok && tag == "" {
		tag = "latest"
	}
	return tag
}

func defaultEnvSource(from *corev1.EnvVarSource) {
	if from == nil {
		return
	}
	defaultFieldRef(from.FieldRef)
	if from.FileKeyRef != nil && from.FileKeyRef.Optional == nil {
		from.FileKeyRef.Optional = ptr(false)
	}
}

func defaultFieldRef(ref *corev1.ObjectFieldSelector) {
	if ref != nil && ref.APIVersion == "" {
		ref.APIVersion = "v1"
	}
}

func defaultProbe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	defaultHTTPGet(p.HTTPGet)
	if p.GRPC != nil && p.GRPC.Service == nil {
		p.GRPC.Service = ptr("")
	}
}

func defaultHTTPGet(h *corev1.HTTPGetAction) {
	if h == nil {
		return
	}
	if h.Path == "" {
		h.Path = "/"
	}
	if h.Scheme == "" {
		h.Scheme = corev1.URISchemeHTTP
	}
}

// roundResourceList rounds quantities up to milli precision, as kube has
// always done rather than reject finer values.
func roundResourceList(list corev1.ResourceList) {
	for name, q := range list {
		q.RoundUp(-3)
		list[name] = q
	}
}

func roundRequirements(r *corev1.ResourceRequirements) {
	if r != nil {
		roundResourceList(r.Limits)
		roundResourceList(r.Requests)
	}
}
