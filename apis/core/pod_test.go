package core

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var ctx = context.Background()

func TestPodPrepareForCreate(t *testing.T) {
	pod := validPod()
	pod.Generation = 7
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", QOSClass: corev1.PodQOSGuaranteed}
	PodStrategy{}.PrepareForCreate(ctx, pod)
	want := corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort}
	if pod.Generation != 1 || pod.Status.Phase != want.Phase || pod.Status.QOSClass != want.QOSClass || pod.Status.PodIP != "" {
		t.Errorf("generation %d, status %+v; want 1 and %+v", pod.Generation, pod.Status, want)
	}

	gated := validPod()
	gated.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/wait"}}
	PodStrategy{}.PrepareForCreate(ctx, gated)
	c := podCondition(&gated.Status, corev1.PodScheduled)
	if c == nil || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonSchedulingGated {
		t.Errorf("gated pod conditions = %+v", gated.Status.Conditions)
	}
}

func TestPodMatchLabelKeys(t *testing.T) {
	pod := validPod()
	pod.Labels = map[string]string{"app": "web", "rev": "2"}
	pod.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{}, TopologyKey: "zone", MatchLabelKeys: []string{"rev", "missing"}, MismatchLabelKeys: []string{"app"},
		}},
	}}
	PodStrategy{}.PrepareForCreate(ctx, pod)
	got := pod.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchExpressions
	want := []metav1.LabelSelectorRequirement{
		{Key: "rev", Operator: metav1.LabelSelectorOpIn, Values: []string{"2"}},
		{Key: "app", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"web"}},
	}
	if !slices.EqualFunc(got, want, func(a, b metav1.LabelSelectorRequirement) bool {
		return a.Key == b.Key && a.Operator == b.Operator && slices.Equal(a.Values, b.Values)
	}) {
		t.Errorf("match expressions = %+v", got)
	}
}

func TestPodQOSClass(t *testing.T) {
	res := func(req, lim corev1.ResourceList) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: req, Limits: lim}
	}
	full := corev1.ResourceList{"cpu": q("1"), "memory": q("1Gi")}
	tests := []struct {
		name   string
		init   []corev1.ResourceRequirements
		main   []corev1.ResourceRequirements
		podLvl *corev1.ResourceRequirements
		want   corev1.PodQOSClass
	}{
		{"nothing", nil, []corev1.ResourceRequirements{{}}, nil, corev1.PodQOSBestEffort},
		{"equal cpu and memory", nil, []corev1.ResourceRequirements{res(full, full)}, nil, corev1.PodQOSGuaranteed},
		{"limits only are defaulted requests", nil, []corev1.ResourceRequirements{res(nil, full)}, nil, corev1.PodQOSBurstable},
		{"cpu only", nil, []corev1.ResourceRequirements{res(corev1.ResourceList{"cpu": q("1")}, corev1.ResourceList{"cpu": q("1")})}, nil, corev1.PodQOSBurstable},
		{"guaranteed and best effort", nil, []corev1.ResourceRequirements{res(full, full), {}}, nil, corev1.PodQOSBurstable},
		{"init container counts", []corev1.ResourceRequirements{{}}, []corev1.ResourceRequirements{res(full, full)}, nil, corev1.PodQOSBurstable},
		{"extended only", nil, []corev1.ResourceRequirements{res(corev1.ResourceList{"example.com/gpu": q("1")}, corev1.ResourceList{"example.com/gpu": q("1")})}, nil, corev1.PodQOSBestEffort},
		{"pod level decides", nil, []corev1.ResourceRequirements{{}}, &corev1.ResourceRequirements{Requests: full, Limits: full}, corev1.PodQOSGuaranteed},
		{"pod level without cpu or memory", nil, []corev1.ResourceRequirements{res(full, full)},
			&corev1.ResourceRequirements{Limits: corev1.ResourceList{"example.com/x": q("1")}}, corev1.PodQOSGuaranteed},
	}
	for _, tt := range tests {
		pod := &corev1.Pod{Spec: corev1.PodSpec{Resources: tt.podLvl}}
		for _, r := range tt.init {
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, corev1.Container{Resources: r})
		}
		for _, r := range tt.main {
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{Resources: r})
		}
		if got := PodQOSClass(pod); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestPodPrepareForUpdate(t *testing.T) {
	old := validPod()
	old.Generation = 3
	old.Status = corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort}
	pod := old.DeepCopy()
	pod.Status = corev1.PodStatus{Phase: corev1.PodFailed}
	pod.Spec.Containers[0].Image = "nginx:1.26"
	PodStrategy{}.PrepareForUpdate(ctx, pod, old)
	if pod.Status.Phase != corev1.PodRunning {
		t.Errorf("status changed through the main resource: %+v", pod.Status)
	}
	if pod.Generation != 4 {
		t.Errorf("generation = %d, want 4 after a spec change", pod.Generation)
	}
	same := old.DeepCopy()
	PodStrategy{}.PrepareForUpdate(ctx, same, old)
	if same.Generation != 3 {
		t.Errorf("generation = %d without a spec change", same.Generation)
	}
}

func TestPodValidateUpdate(t *testing.T) {
	tests := []struct {
		name string
		mut  func(p *corev1.Pod)
		want []wantErr
	}{
		{"image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.26" }, nil},
		{"active deadline set", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr[int64](60) }, nil},
		{"toleration added", func(p *corev1.Pod) {
			p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: "k", Operator: "Exists"})
		}, nil},
		{"toleration seconds changed", func(p *corev1.Pod) { p.Spec.Tolerations[0].TolerationSeconds = ptr[int64](10) }, nil},
		{"toleration removed", func(p *corev1.Pod) { p.Spec.Tolerations = nil }, []wantErr{forb("spec.tolerations")}},
		{"scheduling gate removed", func(p *corev1.Pod) { p.Spec.SchedulingGates = nil }, nil},
		{"scheduling gate added", func(p *corev1.Pod) {
			p.Spec.SchedulingGates = append(p.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: "example.com/new"})
		}, []wantErr{forb("spec.schedulingGates[1].name")}},
		{"node selector added while gated", func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }, nil},
		{"container added", func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, defaultedContainer("d", "busybox", corev1.PullAlways))
		}, []wantErr{forb("spec.containers")}},
		{"restart policy", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }, []wantErr{forb("spec")}},
		{"grace period", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr[int64](5) }, []wantErr{forb("spec")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := validPod()
			old.Spec.Tolerations = []corev1.Toleration{{Key: "t", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr[int64](300)}}
			old.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
			pod := old.DeepCopy()
			tt.mut(pod)
			checkErrs(t, PodStrategy{}.ValidateUpdate(ctx, pod, old), tt.want...)
		})
	}

	old := validPod()
	old.Spec.ActiveDeadlineSeconds = ptr[int64](60)
	for _, d := range []*int64{ptr[int64](61), nil} {
		pod := old.DeepCopy()
		pod.Spec.ActiveDeadlineSeconds = d
		checkErrs(t, ValidatePodUpdate(pod, old), inv("spec.activeDeadlineSeconds"))
	}

	pod := old.DeepCopy()
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	errs := ValidatePodUpdate(pod, old)
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Detail, "pod updates may not change fields other than `spec.containers[*].image`,") ||
		!strings.Contains(errs[0].Detail, "Never") {
		t.Errorf("message = %q", errs)
	}
}

func TestPodGracePeriod(t *testing.T) {
	tests := []struct {
		name  string
		node  string
		phase corev1.PodPhase
		spec  *int64
		opt   *int64
		want  int64
	}{
		{"pod's period", "n", corev1.PodRunning, ptr[int64](30), nil, 30},
		{"asked for", "n", corev1.PodRunning, ptr[int64](30), ptr[int64](5), 5},
		{"asked for 0", "n", corev1.PodRunning, ptr[int64](30), ptr[int64](0), 0},
		{"not scheduled", "", corev1.PodPending, ptr[int64](30), ptr[int64](5), 0},
		{"succeeded", "n", corev1.PodSucceeded, ptr[int64](30), nil, 0},
		{"failed", "n", corev1.PodFailed, ptr[int64](30), nil, 0},
		{"negative", "n", corev1.PodRunning, ptr[int64](30), ptr[int64](-3), 1},
		{"no period", "n", corev1.PodRunning, nil, nil, 0},
	}
	for _, tt := range tests {
		pod := &corev1.Pod{Spec: corev1.PodSpec{NodeName: tt.node, TerminationGracePeriodSeconds: tt.spec}, Status: corev1.PodStatus{Phase: tt.phase}}
		opts := &metav1.DeleteOptions{GracePeriodSeconds: tt.opt}
		got := PodStrategy{}.GracePeriod(ctx, pod, opts)
		if got != tt.want || opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != tt.want {
			t.Errorf("%s: %d (options %v), want %d", tt.name, got, opts.GracePeriodSeconds, tt.want)
		}
	}
	if got := (PodStrategy{}).GracePeriod(ctx, &corev1.Pod{}, nil); got != 0 {
		t.Errorf("without options: %d", got)
	}
}

func TestPodFields(t *testing.T) {
	pod := validPod()
	pod.Spec.NodeName = "n1"
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}}, NominatedNodeName: "n2"}
	got := PodStrategy{}.Fields(pod)
	want := map[string]string{
		"spec.nodeName": "n1", "spec.host": "n1", "spec.restartPolicy": "Always", "spec.schedulerName": "default-scheduler",
		"spec.serviceAccountName": "", "spec.hostNetwork": "false", "status.phase": "Running",
		"status.podIP": "10.0.0.1", "status.podIPs": "", "status.nominatedNodeName": "n2",
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %q, want %q", k, g, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("fields %v, want the keys of %v", keys(got), want)
	}
}

func TestPodStatusStrategy(t *testing.T) {
	old := validPod()
	old.Spec.NodeName = "n1"
	old.OwnerReferences = []metav1.OwnerReference{{Name: "rs"}}
	old.Status = corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort, ObservedGeneration: 2,
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, ObservedGeneration: 2}}}
	pod := old.DeepCopy()
	pod.Spec.NodeName = "n2"
	pod.OwnerReferences = nil
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.9", PodIPs: []corev1.PodIP{{IP: "10.0.0.9"}},
		Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}}
	s := PodStatusStrategy{}
	s.PrepareForUpdate(ctx, pod, old)
	switch {
	case pod.Spec.NodeName != "n1" || len(pod.OwnerReferences) != 1:
		t.Errorf("spec or owners changed through status: %+v", pod)
	case pod.Status.Phase != corev1.PodRunning || pod.Status.QOSClass != corev1.PodQOSBestEffort:
		t.Errorf("status = %+v", pod.Status)
	case pod.Status.ObservedGeneration != 2 || pod.Status.Conditions[0].ObservedGeneration != 2:
		t.Errorf("observed generations dropped: %+v", pod.Status)
	}
	checkErrs(t, s.ValidateUpdate(ctx, pod, old))

	pod.Status.QOSClass = corev1.PodQOSGuaranteed
	pod.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.10"}}
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: "bad type!"})
	checkErrs(t, s.ValidateUpdate(ctx, pod, old), inv("status.qosClass"), inv("status.podIPs[0].ip"), inv("status.conditions[1].Type"))
}

func TestEphemeralContainersStrategy(t *testing.T) {
	old := validPod()
	old.Generation = 1
	debug := corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon(defaultedContainer("debug", "busybox", corev1.PullAlways))}
	pod := old.DeepCopy()
	pod.Labels = map[string]string{"sneaky": "yes"}
	pod.Spec.Containers[0].Image = "other"
	pod.Spec.EphemeralContainers = []corev1.EphemeralContainer{debug}
	s := EphemeralContainersStrategy{}
	s.PrepareForUpdate(ctx, pod, old)
	if pod.Spec.Containers[0].Image != "nginx:1.25" || pod.Labels != nil || len(pod.Spec.EphemeralContainers) != 1 || pod.Generation != 2 {
		t.Errorf("prepared pod = %+v", pod)
	}
	checkErrs(t, s.ValidateUpdate(ctx, pod, old))

	withDebug := pod.DeepCopy()
	removed := withDebug.DeepCopy()
	removed.Spec.EphemeralContainers = nil
	checkErrs(t, s.ValidateUpdate(ctx, removed, withDebug), forb("spec.ephemeralContainers"))
	changed := withDebug.DeepCopy()
	changed.Spec.EphemeralContainers[0].Image = "alpine"
	checkErrs(t, s.ValidateUpdate(ctx, changed, withDebug), forb("spec.ephemeralContainers"))
	bad := withDebug.DeepCopy()
	bad.Spec.EphemeralContainers = append(bad.Spec.EphemeralContainers, corev1.EphemeralContainer{
		EphemeralContainerCommon: corev1.EphemeralContainerCommon(defaultedContainer("c", "busybox", corev1.PullAlways)),
		TargetContainerName:      "nope",
	})
	bad.Spec.EphemeralContainers[1].Ports = []corev1.ContainerPort{{ContainerPort: 80, Protocol: "TCP"}}
	checkErrs(t, s.ValidateUpdate(ctx, bad, withDebug), dup("spec.ephemeralContainers[1].name"),
		notFound("spec.ephemeralContainers[1].targetContainerName"), forb("spec.ephemeralContainers[1].ports"))
}

func TestPodTemplateStrategy(t *testing.T) {
	pt := &corev1.PodTemplate{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}
	s := PodTemplateStrategy{}
	s.Default(pt)
	s.PrepareForCreate(ctx, pt)
	if pt.Generation != 1 || pt.Template.Spec.SchedulerName != "default-scheduler" {
		t.Errorf("template = %+v", pt)
	}
	checkErrs(t, s.Validate(ctx, pt))
	next := pt.DeepCopy()
	next.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	next.Template.Spec.Containers[0].Name = ""
	s.PrepareForUpdate(ctx, next, pt)
	if next.Generation != 2 {
		t.Errorf("generation = %d", next.Generation)
	}
	checkErrs(t, s.ValidateUpdate(ctx, next, pt), req("template.spec.containers[0].name"))
}

func TestReplicationControllerStrategy(t *testing.T) {
	rc := func() *corev1.ReplicationController {
		r := &corev1.ReplicationController{Spec: corev1.ReplicationControllerSpec{Template: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
		}}}
		ReplicationControllerStrategy{}.Default(r)
		return r
	}
	tests := []struct {
		name string
		mut  func(r *corev1.ReplicationController)
		want []wantErr
	}{
		{"valid", func(*corev1.ReplicationController) {}, nil},
		{"negative replicas", func(r *corev1.ReplicationController) { r.Spec.Replicas = ptr[int32](-1) }, []wantErr{inv("spec.replicas")}},
		{"replicas missing", func(r *corev1.ReplicationController) { r.Spec.Replicas = nil }, []wantErr{req("spec.replicas")}},
		{"selector does not match", func(r *corev1.ReplicationController) { r.Spec.Selector = map[string]string{"app": "db"} },
			[]wantErr{inv("spec.template.metadata.labels")}},
		{"empty selector", func(r *corev1.ReplicationController) { r.Spec.Selector = nil }, []wantErr{req("spec.selector")}},
		{"template missing", func(r *corev1.ReplicationController) { r.Spec.Template = nil }, []wantErr{req("spec.template")}},
		{"restart policy", func(r *corev1.ReplicationController) {
			r.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure
		},
			[]wantErr{notSupported("spec.template.spec.restartPolicy")}},
		{"active deadline", func(r *corev1.ReplicationController) { r.Spec.Template.Spec.ActiveDeadlineSeconds = ptr[int64](5) },
			[]wantErr{forb("spec.template.spec.activeDeadlineSeconds")}},
		{"template spec", func(r *corev1.ReplicationController) { r.Spec.Template.Spec.Containers = nil },
			[]wantErr{req("spec.template.spec.containers")}},
		{"template labels", func(r *corev1.ReplicationController) {
			r.Spec.Template.Labels["bad key!"] = "x"
		}, []wantErr{inv("spec.template.labels")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rc()
			tt.mut(r)
			checkErrs(t, ReplicationControllerStrategy{}.Validate(ctx, r), tt.want...)
		})
	}

	old := rc()
	old.Generation = 1
	old.Status = corev1.ReplicationControllerStatus{Replicas: 1}
	next := old.DeepCopy()
	next.Status = corev1.ReplicationControllerStatus{}
	next.Spec.Replicas = ptr[int32](3)
	ReplicationControllerStrategy{}.PrepareForUpdate(ctx, next, old)
	if next.Generation != 2 || next.Status.Replicas != 1 {
		t.Errorf("generation %d, status %+v", next.Generation, next.Status)
	}
	status := old.DeepCopy()
	status.Spec.Replicas = ptr[int32](9)
	status.Status = corev1.ReplicationControllerStatus{Replicas: 1, ReadyReplicas: 2}
	ReplicationControllerStatusStrategy{}.PrepareForUpdate(ctx, status, old)
	if *status.Spec.Replicas != 1 {
		t.Error("spec changed through status")
	}
	checkErrs(t, ReplicationControllerStatusStrategy{}.ValidateUpdate(ctx, status, old), inv("status.readyReplicas"))
	if got := (ReplicationControllerStrategy{}).Fields(old)["status.replicas"]; got != "1" {
		t.Errorf("status.replicas = %q", got)
	}
	if w := (ReplicationControllerStrategy{}).WarningsOnCreate(ctx, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}); len(w) != 1 {
		t.Errorf("warnings = %v", w)
	}
}
