package core

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// defaultedContainer is a container as kube returns it after defaulting.
func defaultedContainer(name, image string, pull corev1.PullPolicy) corev1.Container {
	return corev1.Container{
		Name: name, Image: image, ImagePullPolicy: pull,
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
	}
}

// TestDefaultPodMinimal pins the shape `kubectl create -f` of a minimal pod
// gets back from kube, less what admission adds (priority 0 and
// preemptionPolicy PreemptLowerPriority from the Priority plugin, the
// not-ready and unreachable tolerations from DefaultTolerationSeconds, the
// service account and its token volume from ServiceAccount) and what the
// strategy sets (phase Pending, qosClass).
func TestDefaultPodMinimal(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
	}
	DefaultPod(pod)
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx"},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{defaultedContainer("nginx", "nginx", corev1.PullAlways)},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr[int64](30),
			DNSPolicy:                     corev1.DNSClusterFirst,
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 "default-scheduler",
			EnableServiceLinks:            ptr(true),
		},
	}
	if !equality.Semantic.DeepEqual(pod, want) {
		t.Errorf("defaulted pod differs (-want +got):\n%s", diff.Diff(want, pod))
	}
}

// TestDefaultPodTemplate: a template gets the pod spec defaults but none of
// those kube keeps for pods.
func TestDefaultPodTemplate(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		HostNetwork:                   true,
		TerminationGracePeriodSeconds: ptr[int64](-5),
		Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
			Ports:     []corev1.ContainerPort{{ContainerPort: 80}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("1")}}}},
	}}
	DefaultPodTemplateSpec(tmpl)
	s := tmpl.Spec
	switch {
	case s.EnableServiceLinks != nil:
		t.Error("enableServiceLinks defaulted in a template")
	case s.Containers[0].Ports[0].HostPort != 0:
		t.Error("hostPort defaulted in a template")
	case s.Containers[0].Resources.Requests != nil:
		t.Error("requests defaulted from limits in a template")
	case *s.TerminationGracePeriodSeconds != -5:
		t.Error("negative grace period changed in a template")
	case s.Containers[0].Ports[0].Protocol != corev1.ProtocolTCP || s.DNSPolicy != corev1.DNSClusterFirst:
		t.Errorf("pod spec defaults missing: %+v", s)
	}
}

func TestDefaultPodOnly(t *testing.T) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		HostNetwork:                   true,
		TerminationGracePeriodSeconds: ptr[int64](-5),
		Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36",
			Ports: []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 81, HostPort: 81}},
			Resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi")},
				Requests: corev1.ResourceList{"cpu": resource.MustParse("500m")},
			}}},
		InitContainers: []corev1.Container{{Name: "i", Image: "busybox",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"memory": resource.MustParse("1Gi")}}}},
	}}
	DefaultPod(pod)
	c := pod.Spec.Containers[0]
	if got := c.Ports[0].HostPort; got != 80 {
		t.Errorf("hostPort = %d, want the container port under hostNetwork", got)
	}
	if got := c.Resources.Requests; got.Cpu().String() != "500m" || got.Memory().String() != "1Gi" {
		t.Errorf("requests = %v, want cpu kept and memory from limits", got)
	}
	if got := pod.Spec.InitContainers[0].Resources.Requests.Memory().String(); got != "1Gi" {
		t.Errorf("init requests = %v", got)
	}
	if got := *pod.Spec.TerminationGracePeriodSeconds; got != 1 {
		t.Errorf("negative grace period became %d, want 1", got)
	}
}

func TestImagePullPolicy(t *testing.T) {
	tests := []struct {
		image string
		want  corev1.PullPolicy
	}{
		{"nginx", corev1.PullAlways},
		{"nginx:latest", corev1.PullAlways},
		{"registry.example.com:5000/team/nginx", corev1.PullAlways},
		{"nginx:1.25", corev1.PullIfNotPresent},
		{"registry.example.com:5000/team/nginx:1.25", corev1.PullIfNotPresent},
		{"nginx@sha256:" + sixtyFourHex, corev1.PullIfNotPresent},
		{"nginx:latest@sha256:" + sixtyFourHex, corev1.PullAlways},
		{"NGINX", corev1.PullIfNotPresent}, // does not parse
		{"", corev1.PullIfNotPresent},
	}
	for _, tt := range tests {
		if got := pullPolicyFor(tt.image); got != tt.want {
			t.Errorf("pullPolicyFor(%q) = %s, want %s", tt.image, got, tt.want)
		}
	}
	c := corev1.Container{Image: "nginx", ImagePullPolicy: corev1.PullNever}
	defaultContainer(&c)
	if c.ImagePullPolicy != corev1.PullNever {
		t.Error("a set pull policy was overwritten")
	}
}

const sixtyFourHex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestDefaultContainerParts(t *testing.T) {
	c := corev1.Container{
		Name: "c", Image: "x:1",
		Env:           []corev1.EnvVar{{Name: "N", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 9000}},
			PeriodSeconds: 5},
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": resource.MustParse("0.0001")}},
	}
	defaultContainer(&c)
	if got := c.Env[0].ValueFrom.FieldRef.APIVersion; got != "v1" {
		t.Errorf("fieldRef apiVersion = %q", got)
	}
	wantLiveness := corev1.Probe{
		ProbeHandler:   corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: corev1.URISchemeHTTP}},
		TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
	}
	if !equality.Semantic.DeepEqual(*c.LivenessProbe, wantLiveness) {
		t.Errorf("liveness probe (-want +got):\n%s", diff.Diff(wantLiveness, *c.LivenessProbe))
	}
	if p := c.ReadinessProbe; p.PeriodSeconds != 5 || p.GRPC.Service == nil || *p.GRPC.Service != "" {
		t.Errorf("readiness probe = %+v", p)
	}
	if h := c.Lifecycle.PreStop.HTTPGet; h.Path != "/" || h.Scheme != corev1.URISchemeHTTP {
		t.Errorf("preStop httpGet = %+v", h)
	}
	if got := c.Resources.Limits.Cpu().String(); got != "1m" {
		t.Errorf("cpu limit 0.0001 rounded to %s, want 1m", got)
	}
}

func TestDefaultVolumes(t *testing.T) {
	spec := corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "none"},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}},
		{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}},
		{Name: "dapi", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{
			Items: []corev1.DownwardAPIVolumeFile{{Path: "p", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}}},
		{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}},
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/tmp"}}},
		{Name: "image", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: "artifact:v1"}}},
		{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}},
	}}
	defaultPodSpec(&spec)
	v := spec.Volumes
	checks := []struct {
		name string
		ok   bool
	}{
		{"no source is an emptyDir", v[0].EmptyDir != nil},
		{"secret mode 0644", *v[1].Secret.DefaultMode == 0644},
		{"configMap mode 0644", *v[2].ConfigMap.DefaultMode == 0644},
		{"downwardAPI mode 0644", *v[3].DownwardAPI.DefaultMode == 0644},
		{"downwardAPI fieldRef v1", v[3].DownwardAPI.Items[0].FieldRef.APIVersion == "v1"},
		{"projected mode 0644", *v[4].Projected.DefaultMode == 0644},
		{"token expiry 1h", *v[4].Projected.Sources[0].ServiceAccountToken.ExpirationSeconds == 3600},
		{"hostPath type empty", v[5].HostPath.Type != nil && *v[5].HostPath.Type == ""},
		{"image pull policy", v[6].Image.PullPolicy == corev1.PullIfNotPresent},
		{"claim volume mode", *v[7].Ephemeral.VolumeClaimTemplate.Spec.VolumeMode == corev1.PersistentVolumeFilesystem},
	}
	for _, c := range checks {
		if !c.ok {
			t.Error(c.name)
		}
	}
}

func TestDefaultServiceAccountAlias(t *testing.T) {
	spec := corev1.PodSpec{DeprecatedServiceAccount: "old"}
	defaultPodSpec(&spec)
	if spec.ServiceAccountName != "old" || spec.DeprecatedServiceAccount != "old" {
		t.Errorf("from the alias: %q %q", spec.ServiceAccountName, spec.DeprecatedServiceAccount)
	}
	spec = corev1.PodSpec{ServiceAccountName: "new", DeprecatedServiceAccount: "old"}
	defaultPodSpec(&spec)
	if spec.DeprecatedServiceAccount != "new" {
		t.Errorf("serviceAccountName did not win: %q", spec.DeprecatedServiceAccount)
	}
}

func TestDefaultPodStatusIPs(t *testing.T) {
	tests := []struct {
		name   string
		in     corev1.PodStatus
		ip     string
		ipList []string
	}{
		{"from podIP", corev1.PodStatus{PodIP: "10.0.0.1"}, "10.0.0.1", []string{"10.0.0.1"}},
		{"from podIPs", corev1.PodStatus{PodIPs: []corev1.PodIP{{IP: "10.0.0.2"}, {IP: "fd00::2"}}}, "10.0.0.2", []string{"10.0.0.2", "fd00::2"}},
		{"podIP wins", corev1.PodStatus{PodIP: "10.0.0.3", PodIPs: []corev1.PodIP{{IP: "10.0.0.4"}, {IP: "fd00::4"}}}, "10.0.0.3", []string{"10.0.0.3"}},
	}
	for _, tt := range tests {
		defaultPodStatus(&tt.in)
		var got []string
		for _, ip := range tt.in.PodIPs {
			got = append(got, ip.IP)
		}
		if tt.in.PodIP != tt.ip || !equality.Semantic.DeepEqual(got, tt.ipList) {
			t.Errorf("%s: podIP %q podIPs %v", tt.name, tt.in.PodIP, got)
		}
	}
}

func TestDefaultReplicationController(t *testing.T) {
	labels := map[string]string{"app": "web"}
	rc := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{
		Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		},
	}}
	ReplicationControllerStrategy{}.Default(rc)
	switch {
	case *rc.Spec.Replicas != 1:
		t.Errorf("replicas = %d", *rc.Spec.Replicas)
	case rc.Spec.Selector["app"] != "web" || rc.Labels["app"] != "web":
		t.Errorf("selector %v, labels %v: want the template's labels", rc.Spec.Selector, rc.Labels)
	case rc.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways:
		t.Error("template spec not defaulted")
	}
	rc = &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "x"}},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr[int32](0), Selector: map[string]string{"s": "1"},
			Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}}
	ReplicationControllerStrategy{}.Default(rc)
	if *rc.Spec.Replicas != 0 || rc.Spec.Selector["s"] != "1" || rc.Labels["own"] != "x" {
		t.Errorf("set values overwritten: %+v", rc)
	}
}
