package printers

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// testPod is a running pod with one container "a", changed by edit.
func testPod(edit func(p *corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: created("p"),
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "a"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	edit(p)
	return p
}

var (
	running   = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	completed = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}
	always    = ptr(corev1.ContainerRestartPolicyAlways)
)

func waiting(reason string) corev1.ContainerState {
	return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
}

func terminated(reason string, exitCode, signal int32) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: reason, ExitCode: exitCode, Signal: signal}}
}

// lastFinished is a last state of a container that finished d ago.
func lastFinished(d time.Duration) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: ago(d)}}
}

// podCells are the cells of pod p without IP, node, nominated node or
// readiness gates.
func podCells(ready, status, restarts string) []any {
	return []any{"p", ready, status, restarts, "60m", "<none>", "<none>", "<none>", "<none>"}
}

func TestPodStatus(t *testing.T) {
	runRows(t, []rowCase{
		{"running", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b"})
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", Ready: true, State: running}, {Name: "b", Ready: true, State: running}}
		})), podCells("2/2", "Running", "0")},
		{"not ready yet", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: running}}
		})), podCells("0/1", "Running", "0")},
		{"pulling", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: waiting("ErrImagePull")}}
		})), podCells("0/1", "ErrImagePull", "0")},
		{"crash loop", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", RestartCount: 5, State: waiting("CrashLoopBackOff"),
				LastTerminationState: lastFinished(2 * time.Minute)}}
		})), podCells("0/1", "CrashLoopBackOff", "5 (2m ago)")},
		{"restarts without a last state", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", RestartCount: 2, Ready: true, State: running}}
		})), podCells("1/1", "Running", "2")},
		{"scheduling gated", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodPending
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}
		})), podCells("0/1", "SchedulingGated", "0")},
		{"evicted", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.Phase, p.Status.Reason = corev1.PodFailed, "Evicted"
		})), podCells("0/1", "Evicted", "0")},
		{"exit code", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: terminated("", 3, 0)}}
		})), podCells("0/1", "ExitCode:3", "0")},
		{"signal", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: terminated("", 143, 15)}}
		})), podCells("0/1", "Signal:15", "0")},
	})
}

func TestPodInitContainers(t *testing.T) {
	twoInits := func(p *corev1.Pod) {
		p.Status.Phase = corev1.PodPending
		p.Spec.InitContainers = []corev1.Container{{Name: "i1"}, {Name: "i2"}}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: waiting("PodInitializing")}}
	}
	initStatus := func(states ...corev1.ContainerStatus) *corev1.Pod {
		return testPod(func(p *corev1.Pod) { twoInits(p); p.Status.InitContainerStatuses = states })
	}
	runRows(t, []rowCase{
		{"second running", printed(podRow, initStatus(
			corev1.ContainerStatus{Name: "i1", State: completed},
			corev1.ContainerStatus{Name: "i2", State: running, RestartCount: 1},
		)), podCells("0/1", "Init:1/2", "1")},
		{"first initializing", printed(podRow, initStatus(
			corev1.ContainerStatus{Name: "i1", State: waiting("PodInitializing")},
			corev1.ContainerStatus{Name: "i2", State: waiting("PodInitializing")},
		)), podCells("0/1", "Init:0/2", "0")},
		{"crash loop", printed(podRow, initStatus(
			corev1.ContainerStatus{Name: "i1", State: waiting("CrashLoopBackOff"), RestartCount: 3, LastTerminationState: lastFinished(30 * time.Second)},
			corev1.ContainerStatus{Name: "i2", RestartCount: 7},
		)), podCells("0/1", "Init:CrashLoopBackOff", "3 (30s ago)")},
		{"failed with a reason", printed(podRow, initStatus(corev1.ContainerStatus{Name: "i1", State: terminated("OOMKilled", 137, 0)})),
			podCells("0/1", "Init:OOMKilled", "0")},
		{"failed with an exit code", printed(podRow, initStatus(corev1.ContainerStatus{Name: "i1", State: terminated("", 2, 0)})),
			podCells("0/1", "Init:ExitCode:2", "0")},
		{"failed with a signal", printed(podRow, initStatus(corev1.ContainerStatus{Name: "i1", State: terminated("", 137, 9)})),
			podCells("0/1", "Init:Signal:9", "0")},
		{"failed but initialized", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "i1"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "i1", State: terminated("Error", 1, 0), RestartCount: 4}}
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", Ready: true, State: running}}
		})), podCells("1/1", "Init:Error", "0")},
	})
}

func TestPodSidecars(t *testing.T) {
	withSidecar := func(sidecar corev1.ContainerStatus, main ...corev1.ContainerStatus) *corev1.Pod {
		return testPod(func(p *corev1.Pod) {
			p.Spec.InitContainers = []corev1.Container{{Name: "s", RestartPolicy: always}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{sidecar}
			p.Status.ContainerStatuses = main
		})
	}
	runRows(t, []rowCase{
		{"started and ready", printed(podRow, withSidecar(
			corev1.ContainerStatus{Name: "s", Started: ptr(true), Ready: true, State: running, RestartCount: 2, LastTerminationState: lastFinished(5 * time.Minute)},
			corev1.ContainerStatus{Name: "a", Ready: true, State: running, RestartCount: 1, LastTerminationState: lastFinished(10 * time.Minute)},
		)), podCells("2/2", "Running", "3 (5m ago)")},
		{"started, not ready", printed(podRow, withSidecar(
			corev1.ContainerStatus{Name: "s", Started: ptr(true), State: running},
			corev1.ContainerStatus{Name: "a", Ready: true, State: running},
		)), podCells("1/2", "Running", "0")},
		{"not started", printed(podRow, withSidecar(
			corev1.ContainerStatus{Name: "s", Started: ptr(false), State: running, RestartCount: 1},
			corev1.ContainerStatus{Name: "a", State: waiting("PodInitializing")},
		)), podCells("0/2", "Init:0/1", "1")},
	})
}

func TestPodCompleted(t *testing.T) {
	twoContainers := func(phase corev1.PodPhase, ready bool, a, b corev1.ContainerStatus) *corev1.Pod {
		return testPod(func(p *corev1.Pod) {
			p.Status.Phase = phase
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "b"})
			p.Status.ContainerStatuses = []corev1.ContainerStatus{a, b}
			if ready {
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
			}
		})
	}
	done := corev1.ContainerStatus{Name: "a", State: completed}
	up := corev1.ContainerStatus{Name: "b", Ready: true, State: running}
	runRows(t, []rowCase{
		{"succeeded", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodSucceeded
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "a", State: completed}}
		})), podCells("0/1", "Completed", "0")},
		{"one done, one running and ready", printed(podRow, twoContainers(corev1.PodRunning, true, done, up)),
			podCells("1/2", "Running", "0")},
		{"one done, one running, pod not ready", printed(podRow, twoContainers(corev1.PodRunning, false, done, up)),
			podCells("1/2", "NotReady", "0")},
		{"one done, one failed", printed(podRow, twoContainers(corev1.PodFailed, false, done,
			corev1.ContainerStatus{Name: "b", State: terminated("Error", 1, 0)})), podCells("0/2", "Error", "0")},
	})
}

func TestPodTerminating(t *testing.T) {
	deleted := func(edit func(p *corev1.Pod)) *corev1.Pod {
		return testPod(func(p *corev1.Pod) {
			p.DeletionTimestamp = ptr(ago(time.Second))
			edit(p)
		})
	}
	runRows(t, []rowCase{
		{"running", printed(podRow, deleted(func(*corev1.Pod) {})), podCells("0/1", "Terminating", "0")},
		{"node lost", printed(podRow, deleted(func(p *corev1.Pod) { p.Status.Reason = "NodeLost" })), podCells("0/1", "Unknown", "0")},
		{"succeeded", printed(podRow, deleted(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })), podCells("0/1", "Succeeded", "0")},
		{"failed", printed(podRow, deleted(func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed })), podCells("0/1", "Failed", "0")},
	})
}

func TestPodWideCells(t *testing.T) {
	runRows(t, []rowCase{
		{"placed", printed(podRow, testPod(func(p *corev1.Pod) {
			p.Spec.NodeName = "n1"
			p.Status.PodIPs = []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}}
			p.Status.NominatedNodeName = "n2"
			p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "g1"}, {ConditionType: "g2"}, {ConditionType: "g3"}}
			p.Status.Conditions = []corev1.PodCondition{{Type: "g1", Status: corev1.ConditionTrue}, {Type: "g2", Status: corev1.ConditionFalse}}
		})), []any{"p", "0/1", "Running", "0", "60m", "10.0.0.1", "n1", "n2", "1/3"}},
	})
}

// TestPodRowConditions checks that finished pods are marked Completed, so
// that kubectl can hide them.
func TestPodRowConditions(t *testing.T) {
	for phase, want := range map[corev1.PodPhase][]metav1.TableRowCondition{
		corev1.PodRunning:   nil,
		corev1.PodSucceeded: {{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "The pod has completed successfully."}},
		corev1.PodFailed:    {{Type: metav1.RowCompleted, Status: metav1.ConditionTrue, Reason: "Failed", Message: "The pod failed."}},
	} {
		row, _ := podRow(testPod(func(p *corev1.Pod) { p.Status.Phase = phase }), now)
		if !reflect.DeepEqual(row.Conditions, want) {
			t.Errorf("%s: conditions = %+v, want %+v", phase, row.Conditions, want)
		}
	}
}
