package core

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validPod returns a defaulted pod that passes validation.
func validPod() *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25",
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data"}},
		},
	}
	DefaultPod(pod)
	return pod
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

// podCase is a change to a valid pod and the errors it must cause.
type podCase struct {
	name string
	mut  func(p *corev1.Pod)
	want []wantErr
}

func runPodCases(t *testing.T, tests []podCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := validPod()
			tt.mut(pod)
			checkErrs(t, ValidatePod(pod), tt.want...)
		})
	}
}

func notSupported(f string) wantErr { return wantErr{field.ErrorTypeNotSupported, f} }
func dup(f string) wantErr          { return wantErr{field.ErrorTypeDuplicate, f} }
func notFound(f string) wantErr     { return wantErr{field.ErrorTypeNotFound, f} }

func TestValidatePodContainers(t *testing.T) {
	c0 := "spec.containers[0]"
	runPodCases(t, []podCase{
		{"valid", func(p *corev1.Pod) {}, nil},
		{"no containers", func(p *corev1.Pod) { p.Spec.Containers = nil }, []wantErr{req("spec.containers")}},
		{"name missing", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "" }, []wantErr{req(c0 + ".name")}},
		{"name not a DNS label", func(p *corev1.Pod) { p.Spec.Containers[0].Name = "Web_1" }, []wantErr{inv(c0 + ".name")}},
		{"duplicate names", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, p.Spec.Containers[0])
		}, []wantErr{dup("spec.containers[1].name")}},
		{"init name clashes", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{p.Spec.Containers[0]}
		}, []wantErr{dup("spec.initContainers[0].name")}},
		{"image missing", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "" }, []wantErr{req(c0 + ".image")}},
		{"image with spaces", func(p *corev1.Pod) { p.Spec.Containers[0].Image = " nginx" }, []wantErr{inv(c0 + ".image")}},
		{"pull policy", func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = "Sometimes" }, []wantErr{notSupported(c0 + ".imagePullPolicy")}},
		{"termination message policy", func(p *corev1.Pod) { p.Spec.Containers[0].TerminationMessagePolicy = "" },
			[]wantErr{req(c0 + ".terminationMessagePolicy")}},
		{"restart policy on a regular container", func(p *corev1.Pod) {
			p.Spec.Containers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicy("Sometimes"))
		}, []wantErr{notSupported(c0 + ".restartPolicy")}},
		{"init probe without restartPolicy Always", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{defaultedContainer("i", "busybox", corev1.PullAlways)}
			p.Spec.InitContainers[0].ReadinessProbe = execProbe()
		}, []wantErr{forb("spec.initContainers[0].readinessProbe")}},
		{"sidecar probe", func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{defaultedContainer("i", "busybox", corev1.PullAlways)}
			p.Spec.InitContainers[0].RestartPolicy = ptr(corev1.ContainerRestartPolicyAlways)
			p.Spec.InitContainers[0].ReadinessProbe = execProbe()
		}, nil},
	})
}

func execProbe() *corev1.Probe {
	p := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	defaultProbe(p)
	return p
}

func TestValidatePodPorts(t *testing.T) {
	ports := "spec.containers[0].ports"
	set := func(ps ...corev1.ContainerPort) func(p *corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Containers[0].Ports = ps }
	}
	runPodCases(t, []podCase{
		{"valid", set(corev1.ContainerPort{Name: "http", ContainerPort: 80, Protocol: "TCP"}), nil},
		{"port 0", set(corev1.ContainerPort{Protocol: "TCP"}), []wantErr{req(ports + "[0].containerPort")}},
		{"port too big", set(corev1.ContainerPort{ContainerPort: 65536, Protocol: "TCP"}), []wantErr{inv(ports + "[0].containerPort")}},
		{"host port too big", set(corev1.ContainerPort{ContainerPort: 80, HostPort: 70000, Protocol: "TCP"}), []wantErr{inv(ports + "[0].hostPort")}},
		{"bad name", set(corev1.ContainerPort{Name: "http_1", ContainerPort: 80, Protocol: "TCP"}), []wantErr{inv(ports + "[0].name")}},
		{"name too long", set(corev1.ContainerPort{Name: "a-very-long-name", ContainerPort: 80, Protocol: "TCP"}), []wantErr{inv(ports + "[0].name")}},
		{"duplicate name", set(corev1.ContainerPort{Name: "http", ContainerPort: 80, Protocol: "TCP"},
			corev1.ContainerPort{Name: "http", ContainerPort: 81, Protocol: "TCP"}), []wantErr{dup(ports + "[1].name")}},
		{"protocol", set(corev1.ContainerPort{ContainerPort: 80, Protocol: "HTTP"}), []wantErr{notSupported(ports + "[0].protocol")}},
		{"protocol missing", set(corev1.ContainerPort{ContainerPort: 80}), []wantErr{req(ports + "[0].protocol")}},
		{"host port clash", set(corev1.ContainerPort{ContainerPort: 80, HostPort: 8080, Protocol: "TCP"},
			corev1.ContainerPort{ContainerPort: 81, HostPort: 8080, Protocol: "TCP"}), []wantErr{dup(ports + "[1].hostPort")}},
		{"host network needs equal ports", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 81, Protocol: "TCP"}}
		}, []wantErr{inv(ports + "[0].hostPort")}},
	})
}

func TestValidatePodEnv(t *testing.T) {
	env := "spec.containers[0].env"
	set := func(vars ...corev1.EnvVar) func(p *corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Containers[0].Env = vars }
	}
	fieldRef := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}
	}
	runPodCases(t, []podCase{
		{"valid", set(corev1.EnvVar{Name: "A.b-c", Value: "1"}, corev1.EnvVar{Name: "N", ValueFrom: fieldRef("metadata.labels['app']")}), nil},
		{"name missing", set(corev1.EnvVar{Value: "1"}), []wantErr{req(env + "[0].name")}},
		{"name with =", set(corev1.EnvVar{Name: "A=B"}), []wantErr{inv(env + "[0].name")}},
		{"value and valueFrom", set(corev1.EnvVar{Name: "A", Value: "1", ValueFrom: fieldRef("metadata.name")}), []wantErr{inv(env + "[0].valueFrom")}},
		{"empty valueFrom", set(corev1.EnvVar{Name: "A", ValueFrom: &corev1.EnvVarSource{}}), []wantErr{inv(env + "[0].valueFrom")}},
		{"unsupported field", set(corev1.EnvVar{Name: "A", ValueFrom: fieldRef("spec.hostname")}), []wantErr{inv(env + "[0].valueFrom.fieldRef.fieldPath")}},
		{"field not for env", set(corev1.EnvVar{Name: "A", ValueFrom: fieldRef("status.phase")}), []wantErr{notSupported(env + "[0].valueFrom.fieldRef.fieldPath")}},
		{"configMapKeyRef key", set(corev1.EnvVar{Name: "A", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}),
			[]wantErr{req(env + "[0].valueFrom.configMapKeyRef.key")}},
		{"resourceFieldRef", set(corev1.EnvVar{Name: "A", ValueFrom: &corev1.EnvVarSource{
			ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.gpu"}}}),
			[]wantErr{notSupported(env + "[0].valueFrom.resourceFieldRef.resource")}},
		{"envFrom without source", func(p *corev1.Pod) { p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{Prefix: "P_"}} },
			[]wantErr{inv("spec.containers[0].envFrom")}},
		{"envFrom with both", func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{
				ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a"}},
				SecretRef:    &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "b"}}}}
		}, []wantErr{inv("spec.containers[0].envFrom")}},
		{"envFrom bad name", func(p *corev1.Pod) {
			p.Spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "A_b"}}}}
		}, []wantErr{inv("spec.containers[0].envFrom[0].configMapRef.name")}},
	})
}

func TestValidatePodVolumes(t *testing.T) {
	add := func(v corev1.Volume) func(p *corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Volumes = append(p.Spec.Volumes, v) }
	}
	runPodCases(t, []podCase{
		{"duplicate name", add(corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}),
			[]wantErr{dup("spec.volumes[1].name")}},
		{"name not a DNS label", add(corev1.Volume{Name: "Data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}),
			[]wantErr{inv("spec.volumes[1].name")}},
		{"no source", add(corev1.Volume{Name: "x"}), []wantErr{req("spec.volumes[1]")}},
		{"two sources", add(corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{},
			DownwardAPI: &corev1.DownwardAPIVolumeSource{}}}), []wantErr{forb("spec.volumes[1].downwarAPI")}},
		{"secret name", add(corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}}),
			[]wantErr{req("spec.volumes[1].secret.secretName")}},
		{"configMap mode", add(corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, DefaultMode: ptr[int32](01000)}}}),
			[]wantErr{inv("spec.volumes[1].configMap.defaultMode")}},
		{"item path with ..", add(corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: []corev1.KeyToPath{{Key: "k", Path: "../etc"}}}}}),
			[]wantErr{inv("spec.volumes[1].configMap.items[0].path")}},
		{"hostPath type", add(corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: "/x", Type: ptr(corev1.HostPathType("Pipe"))}}}), []wantErr{notSupported("spec.volumes[1].hostPath.type")}},
		{"pvc claim name", add(corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}}),
			[]wantErr{req("spec.volumes[1].persistentVolumeClaim.claimName")}},
		{"ephemeral claim spec", add(corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{}}}}),
			[]wantErr{req("spec.volumes[1].ephemeral.volumeClaimTemplate.spec.accessModes"),
				req("spec.volumes[1].ephemeral.volumeClaimTemplate.spec.resources[storage]")}},
		{"token without service account", add(corev1.Volume{Name: "x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "t", ExpirationSeconds: ptr[int64](3600)}}}}}}),
			[]wantErr{forb("spec.volumes[1].projected.sources[0].serviceAccountToken")}},
		{"mount of unknown volume", func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts[0].Name = "nope" },
			[]wantErr{notFound("spec.containers[0].volumeMounts[0].name")}},
		{"mount of invalid volume", func(p *corev1.Pod) {
			p.Spec.Volumes[0].Name = "Data"
			p.Spec.Containers[0].VolumeMounts[0].Name = "Data"
		},
			[]wantErr{inv("spec.volumes[0].name"), notFound("spec.containers[0].volumeMounts[0].name")}},
		{"mount path missing", func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts[0].MountPath = "" },
			[]wantErr{req("spec.containers[0].volumeMounts[0].mountPath")}},
		{"mount path twice", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts = append(p.Spec.Containers[0].VolumeMounts, p.Spec.Containers[0].VolumeMounts[0])
		}, []wantErr{inv("spec.containers[0].volumeMounts[1].mountPath")}},
		{"absolute subPath", func(p *corev1.Pod) { p.Spec.Containers[0].VolumeMounts[0].SubPath = "/x" },
			[]wantErr{inv("spec.containers[0].volumeMounts.subPath")}},
		{"bidirectional unprivileged", func(p *corev1.Pod) {
			p.Spec.Containers[0].VolumeMounts[0].MountPropagation = ptr(corev1.MountPropagationBidirectional)
		}, []wantErr{forb("spec.containers[0].volumeMounts.mountPropagation")}},
	})
}

func TestValidatePodResources(t *testing.T) {
	res := "spec.containers[0].resources"
	set := func(r corev1.ResourceRequirements) func(p *corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Containers[0].Resources = r }
	}
	runPodCases(t, []podCase{
		{"valid", set(corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1"), "example.com/gpu": q("1")},
			Requests: corev1.ResourceList{"cpu": q("500m"), "example.com/gpu": q("1")}}), nil},
		{"negative", set(corev1.ResourceRequirements{Requests: corev1.ResourceList{"memory": q("-1Gi")}}), []wantErr{inv(res + ".requests[memory]")}},
		{"request above limit", set(corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1")},
			Requests: corev1.ResourceList{"cpu": q("2")}}), []wantErr{inv(res + ".requests")}},
		{"unknown resource", set(corev1.ResourceRequirements{Limits: corev1.ResourceList{"gpu": q("1")}}), []wantErr{inv(res + ".limits[gpu]"), inv(res + ".limits[gpu]")}},
		{"extended resource without limit", set(corev1.ResourceRequirements{Requests: corev1.ResourceList{"example.com/gpu": q("1")}}),
			[]wantErr{req(res + ".limits")}},
		{"fraction of an extended resource", set(corev1.ResourceRequirements{Limits: corev1.ResourceList{"example.com/gpu": q("500m")},
			Requests: corev1.ResourceList{"example.com/gpu": q("500m")}}), []wantErr{inv(res + ".limits[example.com/gpu]"), inv(res + ".requests[example.com/gpu]")}},
		{"hugepages alone", set(corev1.ResourceRequirements{Limits: corev1.ResourceList{"hugepages-2Mi": q("2Mi")},
			Requests: corev1.ResourceList{"hugepages-2Mi": q("2Mi")}}), []wantErr{forb(res)}},
		{"pod-level resource name", func(p *corev1.Pod) {
			p.Spec.Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{"ephemeral-storage": q("1Gi")}}
		}, []wantErr{notSupported("spec.resources.limits[ephemeral-storage]")}},
	})
	pod := validPod()
	pod.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: corev1.ResourceList{"cpu": q("1")}, Requests: corev1.ResourceList{"cpu": q("2")}}
	checkDetail(t, ValidatePod(pod), "must be less than or equal to cpu limit of 1")
}

func TestValidatePodSpecFields(t *testing.T) {
	runPodCases(t, []podCase{
		{"restartPolicy", func(p *corev1.Pod) { p.Spec.RestartPolicy = "Sometimes" }, []wantErr{notSupported("spec.restartPolicy")}},
		{"dnsPolicy", func(p *corev1.Pod) { p.Spec.DNSPolicy = "Cluster" }, []wantErr{notSupported("spec.dnsPolicy")}},
		{"dnsPolicy None needs config", func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSNone }, []wantErr{req("spec.dnsConfig")}},
		{"grace period missing", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = nil }, []wantErr{req("spec.terminationGracePeriodSeconds")}},
		{"grace period negative", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr[int64](-1) },
			[]wantErr{inv("spec.terminationGracePeriodSeconds")}},
		{"active deadline 0", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr[int64](0) }, []wantErr{inv("spec.activeDeadlineSeconds")}},
		{"active deadline 1", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr[int64](1) }, nil},
		{"node selector", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"a b": "c"} }, []wantErr{inv("spec.nodeSelector")}},
		{"node selector value", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "ss d"} }, []wantErr{inv("spec.nodeSelector")}},
		{"service account", func(p *corev1.Pod) { p.Spec.ServiceAccountName = "Bad_SA"; p.Spec.DeprecatedServiceAccount = "Bad_SA" },
			[]wantErr{inv("spec.serviceAccountName")}},
		{"service account alias", func(p *corev1.Pod) { p.Spec.DeprecatedServiceAccount = "other" }, []wantErr{inv("spec.deprecatedServiceAccount")}},
		{"hostname", func(p *corev1.Pod) { p.Spec.Hostname = "a.b" }, []wantErr{inv("spec.hostname")}},
		{"subdomain", func(p *corev1.Pod) { p.Spec.Subdomain = "A" }, []wantErr{inv("spec.subdomain")}},
		{"node name", func(p *corev1.Pod) { p.Spec.NodeName = "Node_1" }, []wantErr{inv("spec.nodeName")}},
		{"image pull secret", func(p *corev1.Pod) { p.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "ok"}} }, nil},
		{"host users and host network", func(p *corev1.Pod) { p.Spec.HostUsers = ptr(false); p.Spec.HostNetwork = true },
			[]wantErr{forb("spec.hostNetwork")}},
		{"ephemeral containers on create", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon(
				defaultedContainer("debug", "busybox", corev1.PullAlways))}}
		}, []wantErr{forb("spec.ephemeralContainers")}},
		{"node name with gates", func(p *corev1.Pod) {
			p.Spec.NodeName = "n1"
			p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
		}, []wantErr{forb("spec.nodeName")}},
		{"deletion cost", func(p *corev1.Pod) { p.Annotations = map[string]string{corev1.PodDeletionCost: "+1"} },
			[]wantErr{inv("metadata.annotations[controller.kubernetes.io/pod-deletion-cost]")}},
		{"seccomp mismatch", func(p *corev1.Pod) {
			p.Annotations = map[string]string{corev1.SeccompPodAnnotationKey: "unconfined"}
			p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
		}, []wantErr{forb("spec.securityContext.seccompProfile.type")}},
	})
}

func TestValidatePodTolerations(t *testing.T) {
	tol := "spec.tolerations[0]"
	set := func(ts ...corev1.Toleration) func(p *corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.Tolerations = ts }
	}
	runPodCases(t, []podCase{
		{"valid", set(corev1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr[int64](300)},
			corev1.Toleration{Operator: "Exists"}, corev1.Toleration{Key: "k", Value: "v", Effect: "NoSchedule"}), nil},
		{"empty key needs Exists", set(corev1.Toleration{Operator: "Equal"}), []wantErr{inv(tol + ".operator")}},
		{"bad key", set(corev1.Toleration{Key: "a b", Operator: "Exists"}), []wantErr{inv(tol + ".key")}},
		{"seconds without NoExecute", set(corev1.Toleration{Key: "k", Operator: "Exists", TolerationSeconds: ptr[int64](1)}),
			[]wantErr{inv(tol + ".effect")}},
		{"value with Exists", set(corev1.Toleration{Key: "k", Operator: "Exists", Value: "v"}), []wantErr{inv(tol + ".operator")}},
		{"operator", set(corev1.Toleration{Key: "k", Operator: "In"}), []wantErr{notSupported(tol + ".operator")}},
		{"effect", set(corev1.Toleration{Key: "k", Operator: "Exists", Effect: "Evict"}), []wantErr{notSupported(tol + ".effect")}},
	})
}

func TestValidatePodProbes(t *testing.T) {
	lp := "spec.containers[0].livenessProbe"
	set := func(mut func(*corev1.Probe)) func(p *corev1.Pod) {
		return func(p *corev1.Pod) {
			pr := execProbe()
			mut(pr)
			p.Spec.Containers[0].LivenessProbe = pr
		}
	}
	runPodCases(t, []podCase{
		{"valid", set(func(*corev1.Probe) {}), nil},
		{"no handler", set(func(p *corev1.Probe) { p.Exec = nil }), []wantErr{req(lp)}},
		{"two handlers", set(func(p *corev1.Probe) { p.TCPSocket = &corev1.TCPSocketAction{Port: intstr.FromInt32(80)} }),
			[]wantErr{forb(lp + ".tcpSocket")}},
		{"empty command", set(func(p *corev1.Probe) { p.Exec.Command = nil }), []wantErr{req(lp + ".exec.command")}},
		{"negative period", set(func(p *corev1.Probe) { p.PeriodSeconds = -1 }), []wantErr{inv(lp + ".periodSeconds")}},
		{"liveness success threshold", set(func(p *corev1.Probe) { p.SuccessThreshold = 2 }), []wantErr{inv(lp + ".successThreshold")}},
		{"http port name", set(func(p *corev1.Probe) {
			p.Exec = nil
			p.HTTPGet = &corev1.HTTPGetAction{Path: "/", Port: intstr.FromString("not_valid"), Scheme: "HTTP"}
		}), []wantErr{inv(lp + ".httpGet.port")}},
		{"http scheme", set(func(p *corev1.Probe) {
			p.Exec = nil
			p.HTTPGet = &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(80), Scheme: "FTP"}
		}), []wantErr{notSupported(lp + ".httpGet.scheme")}},
	})
	pod := validPod()
	pod.Spec.Containers[0].ReadinessProbe = execProbe()
	pod.Spec.Containers[0].ReadinessProbe.SuccessThreshold = 3
	checkErrs(t, ValidatePod(pod))
}

func TestValidatePodSecurityContext(t *testing.T) {
	runPodCases(t, []podCase{
		{"negative runAsUser", func(p *corev1.Pod) { p.Spec.SecurityContext.RunAsUser = ptr[int64](-1) }, []wantErr{inv("spec.securityContext.runAsUser")}},
		{"sysctl name", func(p *corev1.Pod) { p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "Net.Core"}} },
			[]wantErr{inv("spec.securityContext.sysctls[0].name")}},
		{"net sysctl on host network", func(p *corev1.Pod) {
			p.Spec.HostNetwork = true
			p.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_forward", Value: "1"}}
		}, []wantErr{inv("spec.securityContext.sysctls[0].name")}},
		{"seccomp localhost needs profile", func(p *corev1.Pod) {
			p.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}
		}, []wantErr{req("spec.securityContext.seccompProfile.localhostProfile")}},
		{"privileged without escalation", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr(true), AllowPrivilegeEscalation: ptr(false)}
		}, []wantErr{inv("spec.containers[0].securityContext")}},
		{"unmasked proc mount with host users", func(p *corev1.Pod) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{ProcMount: ptr(corev1.UnmaskedProcMount)}
		}, []wantErr{inv("spec.containers[0].securityContext.procMount")}},
		{"windows options on linux", func(p *corev1.Pod) {
			p.Spec.OS = &corev1.PodOS{Name: corev1.Linux}
			p.Spec.SecurityContext.WindowsOptions = &corev1.WindowsSecurityContextOptions{}
		}, []wantErr{forb("spec.securityContext.windowsOptions")}},
	})
}

func TestValidatePodTemplateSpec(t *testing.T) {
	tmpl := &corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: " placeholder "}}},
	}
	DefaultPodTemplateSpec(tmpl)
	tmpl.Spec.HostNetwork = true
	tmpl.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}}
	checkErrs(t, ValidatePodTemplateSpec(tmpl, field.NewPath("template")))

	tmpl.Labels["bad key!"] = "x"
	tmpl.Spec.EphemeralContainers = []corev1.EphemeralContainer{{}}
	errs := ValidatePodTemplateSpec(tmpl, field.NewPath("spec", "template"))
	got := errs.ToAggregate().Error()
	for _, want := range []string{"spec.template.labels: Invalid value", "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
}

// TestValidationMessages pins a few messages users see word for word.
func TestValidationMessages(t *testing.T) {
	pod := validPod()
	pod.Spec.Containers[0].Name = "Web_1"
	pod.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "HTTP"}}
	pod.Spec.RestartPolicy = "Sometimes"
	got := ValidatePod(pod).ToAggregate().Error()
	for _, want := range []string{
		`spec.containers[0].name: Invalid value: "Web_1": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'`,
		`spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"`,
		`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("errors\n%s\nlack\n%s", got, want)
		}
	}
}
