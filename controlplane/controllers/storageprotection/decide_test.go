package storageprotection

import (
	"log/slog"
	"slices"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

var now = metav1.NewTime(time.Unix(1000, 0))

func TestFinalizerStates(t *testing.T) {
	const f = "kubernetes.io/pv-protection"
	for _, tc := range []struct {
		name             string
		deleting         bool
		finalizers       []string
		needs, candidate bool
	}{
		{"live without it", false, []string{"other"}, true, false},
		{"live with it", false, []string{"other", f}, false, false},
		{"being deleted with it", true, []string{f}, false, true},
		{"being deleted without it", true, []string{"other"}, false, false},
	} {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Finalizers: tc.finalizers}}
		if tc.deleting {
			pv.DeletionTimestamp = &now
		}
		if got := needsFinalizer(pv, f); got != tc.needs {
			t.Errorf("%s: needsFinalizer = %v", tc.name, got)
		}
		if got := deletionCandidate(pv, f); got != tc.candidate {
			t.Errorf("%s: deletionCandidate = %v", tc.name, got)
		}
	}
}

// pod is a pod of namespace ns with the volumes; onNode schedules it.
func pod(onNode bool, volumes ...corev1.Volume) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "pod-uid"}, Spec: corev1.PodSpec{Volumes: volumes}}
	if onNode {
		p.Spec.NodeName = "node-1"
	}
	return p
}

func claimVolume(claim string) corev1.Volume {
	return corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func ephemeralVolume(name string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}}
}

// claim is the claim ns/name, controlled by the pod of ownerUID if set.
func claim(name string, ownerUID types.UID) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	if ownerUID != "" {
		yes := true
		pvc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: ownerUID, Controller: &yes}}
	}
	return pvc
}

func shutDown(p *corev1.Pod) *corev1.Pod {
	zero := int64(0)
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &zero
	return p
}

func withPhase(p *corev1.Pod, phase corev1.PodPhase) *corev1.Pod {
	p.Status.Phase = phase
	return p
}

// deleting marks p deleted with a grace period, its containers in states.
func deleting(p *corev1.Pod, states ...corev1.ContainerState) *corev1.Pod {
	grace := int64(30)
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, &grace
	for _, s := range states {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{State: s})
	}
	return p
}

var (
	running = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	stopped = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}
	waiting = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}
)

// TestUses: which pods keep a claim from deletion (holdsClaim) and which
// make it used for its Unused condition (referencesClaim).
func TestUses(t *testing.T) {
	for _, tc := range []struct {
		name             string
		pod              *corev1.Pod
		pvc              *corev1.PersistentVolumeClaim
		holds, reference bool
	}{
		{"scheduled, naming it", pod(true, claimVolume("c")), claim("c", ""), true, true},
		{"not scheduled, naming it", pod(false, claimVolume("c")), claim("c", ""), false, true},
		{"scheduled, naming another", pod(true, claimVolume("other")), claim("c", ""), false, false},
		{"its ephemeral claim", pod(true, ephemeralVolume("data")), claim("p-data", "pod-uid"), true, true},
		{"its ephemeral claim, not scheduled", pod(false, ephemeralVolume("data")), claim("p-data", "pod-uid"), false, true},
		{"an ephemeral claim of that name it does not own", pod(true, ephemeralVolume("data")), claim("p-data", "other-uid"), false, false},
		// Shut down, no container running: terminated too.
		{"its ephemeral claim, pod shut down", shutDown(pod(true, ephemeralVolume("data"))), claim("p-data", "pod-uid"), false, false},
		{"naming it, pod shut down", shutDown(pod(true, claimVolume("c"))), claim("c", ""), true, false},
		{"naming it, pod succeeded", withPhase(pod(true, claimVolume("c")), corev1.PodSucceeded), claim("c", ""), true, false},
		{"naming it, pod failed", withPhase(pod(true, claimVolume("c")), corev1.PodFailed), claim("c", ""), true, false},
		{"naming it, being deleted, containers stopped", deleting(pod(true, claimVolume("c")), stopped, waiting), claim("c", ""), true, false},
		{"naming it, being deleted, a container running", deleting(pod(true, claimVolume("c")), stopped, running), claim("c", ""), true, true},
	} {
		// The pod as the API has it, and as the loop's cache keeps it.
		viewed, err := claimView(withNoise(tc.pod.DeepCopy()))
		if err != nil {
			t.Fatal(err)
		}
		for what, p := range map[string]*corev1.Pod{"pod": tc.pod, "cached pod": viewed.(*corev1.Pod)} {
			if got := holdsClaim(p, tc.pvc); got != tc.holds {
				t.Errorf("%s, %s: holdsClaim = %v, want %v", tc.name, what, got, tc.holds)
			}
			if got := referencesClaim(p, tc.pvc); got != tc.reference {
				t.Errorf("%s, %s: referencesClaim = %v, want %v", tc.name, what, got, tc.reference)
			}
		}
		if keys, _ := podClaimKeys(viewed); !slices.Equal(keys, mustKeys(podClaimKeys(tc.pod))) {
			t.Errorf("%s: the cached pod's claims %v, the pod's %v", tc.name, keys, mustKeys(podClaimKeys(tc.pod)))
		}
	}
}

// withNoise adds to p what a real pod has and the loop's cache drops.
func withNoise(p *corev1.Pod) *corev1.Pod {
	p.Labels = map[string]string{"app": "x"}
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c", Image: "i", Env: []corev1.EnvVar{{Name: "A", Value: "b"}}})
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}})
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	return p
}

func mustKeys(keys []string, _ error) []string { return keys }

// TestClaimView: the cache keeps no container, no other volume and no
// ephemeral claim template.
func TestClaimView(t *testing.T) {
	p := withNoise(pod(true, claimVolume("c"), ephemeralVolume("data")))
	p.Spec.Volumes[1].Ephemeral.VolumeClaimTemplate = &corev1.PersistentVolumeClaimTemplate{}
	v, err := claimView(p)
	if err != nil {
		t.Fatal(err)
	}
	got := v.(*corev1.Pod)
	if len(got.Spec.Containers) != 0 || len(got.Labels) != 0 || len(got.Status.Conditions) != 0 || len(got.Spec.Volumes) != 2 ||
		got.Spec.Volumes[1].Ephemeral.VolumeClaimTemplate != nil {
		t.Errorf("cached pod keeps too much: %+v", got)
	}
	if tomb := (cache.DeletedFinalStateUnknown{Key: "ns/p"}); mustView(claimView(tomb)) != any(tomb) {
		t.Error("a tombstone was changed")
	}
}

func mustView(v any, err error) any {
	if err != nil {
		panic(err)
	}
	return v
}

func TestPodClaimKeys(t *testing.T) {
	cmVolume := corev1.Volume{Name: "cm", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}}
	keys, err := podClaimKeys(pod(false, claimVolume("c"), cmVolume, ephemeralVolume("data")))
	if err != nil || !slices.Equal(keys, []string{"ns/c", "ns/p-data"}) {
		t.Errorf("podClaimKeys = %q, %v", keys, err)
	}
	if keys, err := podClaimKeys(claim("c", "")); keys != nil || err != nil {
		t.Errorf("podClaimKeys of a claim = %q, %v", keys, err)
	}
}

func TestClasses(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		obj  any
		want []string
	}{
		{"claim naming none", claim("c", ""), nil},
		{"claim: spec, current and target", &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeAttributesClassName: str("new")},
			Status: corev1.PersistentVolumeClaimStatus{CurrentVolumeAttributesClassName: str("old"),
				ModifyVolumeStatus: &corev1.ModifyVolumeStatus{TargetVolumeAttributesClassName: "new"}}}, []string{"new", "old"}},
		{"claim: an empty name", &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeAttributesClassName: str("")}}, nil},
		{"volume", &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{VolumeAttributesClassName: str("gold")}}, []string{"gold"}},
		{"volume: an empty name", &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{VolumeAttributesClassName: str("")}}, nil},
	} {
		var got []string
		if _, ok := tc.obj.(*corev1.PersistentVolume); ok {
			got = volumeClasses(tc.obj)
		} else {
			got = claimClasses(tc.obj)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := claimClasses(&corev1.PersistentVolume{}); got != nil {
		t.Errorf("claimClasses of a volume = %q", got)
	}
}

// drain takes every key queued, sorted.
func drain(q workqueue.TypedRateLimitingInterface[string]) []string {
	var keys []string
	for q.Len() > 0 {
		k, _ := q.Get()
		q.Done(k)
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestEnqueue: which events make the loops look at which objects. The
// loops' clients are never used.
func TestEnqueue(t *testing.T) {
	client := kubernetes.NewForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:1"})
	logger := slog.New(slog.DiscardHandler)
	claims, err := NewClaims(client, logger)
	if err != nil {
		t.Fatal(err)
	}
	classes, err := NewClasses(client, logger)
	if err != nil {
		t.Fatal(err)
	}
	volumes, err := NewVolumes(client, logger)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []workqueue.TypedRateLimitingInterface[string]{claims.queue, classes.queue, volumes.queue} {
		defer q.ShutDown()
	}
	str := func(s string) *string { return &s }
	marked := claim("marked", "")
	marked.Finalizers = []string{"kubernetes.io/pvc-protection"}
	marked.Status.Conditions = []corev1.PersistentVolumeClaimCondition{{Type: corev1.PersistentVolumeClaimUnused, Status: corev1.ConditionTrue}}
	released := marked.DeepCopy()
	released.Name, released.DeletionTimestamp = "released", &now
	protectedPV := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Finalizers: []string{"kubernetes.io/pv-protection"}}}
	bare := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	namesGold := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeAttributesClassName: str("gold")}}
	namesSilver := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeAttributesClassName: str("silver")},
		Status: corev1.PersistentVolumeClaimStatus{CurrentVolumeAttributesClassName: str("gold")}}
	for _, tc := range []struct {
		name  string
		do    func()
		queue workqueue.TypedRateLimitingInterface[string]
		want  []string
	}{
		{"a claim without its Unused condition", func() { claims.claimChanged(claim("c", "")) }, claims.queue, []string{"ns/c"}},
		{"a claim with its finalizer and condition", func() { claims.claimChanged(marked) }, claims.queue, nil},
		{"a claim being deleted", func() { claims.claimChanged(released) }, claims.queue, []string{"ns/released"}},
		{"a pod gone unseen", func() {
			claims.podChanged(cache.DeletedFinalStateUnknown{Obj: pod(true, claimVolume("c"), ephemeralVolume("data"))})
		}, claims.queue, []string{"ns/c", "ns/p-data"}},
		{"a volume with its finalizer", func() { volumes.changed(protectedPV) }, volumes.queue, nil},
		{"a volume without it", func() { volumes.changed(bare) }, volumes.queue, []string{"bare"}},
		{"a claim moving from gold to silver", func() {
			classes.referrerHandler(claimClasses).OnUpdate(namesGold, &corev1.PersistentVolumeClaim{
				Spec: corev1.PersistentVolumeClaimSpec{VolumeAttributesClassName: str("silver")}})
		}, classes.queue, []string{"gold"}},
		{"a claim moving to silver, still at gold", func() { classes.referrerHandler(claimClasses).OnUpdate(namesGold, namesSilver) }, classes.queue, nil},
		{"a claim deleted", func() { classes.referrerHandler(claimClasses).OnDelete(namesSilver) }, classes.queue, []string{"gold", "silver"}},
	} {
		tc.do()
		if got := drain(tc.queue); !slices.Equal(got, tc.want) {
			t.Errorf("%s: queued %q, want %q", tc.name, got, tc.want)
		}
	}
}
