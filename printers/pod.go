package printers

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var podColumns = []metav1.TableColumnDefinition{
	nameColumn(),
	column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
	column("Status", "string", "The aggregate status of the containers in this pod."),
	column("Restarts", "string", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
	ageColumn(),
	wideColumn("IP", "string", corev1.PodStatus{}.SwaggerDoc()["podIP"]),
	wideColumn("Node", "string", corev1.PodSpec{}.SwaggerDoc()["nodeName"]),
	wideColumn("Nominated Node", "string", corev1.PodStatus{}.SwaggerDoc()["nominatedNodeName"]),
	wideColumn("Readiness Gates", "string", corev1.PodSpec{}.SwaggerDoc()["readinessGates"]),
}

// Row conditions of pods that have run to completion.
var (
	podSucceededConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
		Reason: string(corev1.PodSucceeded), Message: "The pod has completed successfully."}}
	podFailedConditions = []metav1.TableRowCondition{{Type: metav1.RowCompleted, Status: metav1.ConditionTrue,
		Reason: string(corev1.PodFailed), Message: "The pod failed."}}
)

func podRow(pod *corev1.Pod, now time.Time) (metav1.TableRow, error) {
	s := summarizePod(pod)
	restarts := strconv.Itoa(s.restarts)
	if s.restarts != 0 && !s.lastRestart.IsZero() {
		restarts = fmt.Sprintf("%d (%s ago)", s.restarts, since(s.lastRestart, now))
	}
	ip := ""
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}
	row, _ := rowOf(pod.Name, fmt.Sprintf("%d/%d", s.ready, s.total), s.reason, restarts, since(pod.CreationTimestamp, now),
		orNone(ip), orNone(pod.Spec.NodeName), orNone(pod.Status.NominatedNodeName), readinessGates(pod))
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		row.Conditions = podSucceededConditions
	case corev1.PodFailed:
		row.Conditions = podFailedConditions
	}
	return row, nil
}

// podSummary is what the Ready, Status and Restarts columns show.
type podSummary struct {
	ready, total int
	reason       string
	restarts     int
	lastRestart  metav1.Time
}

// summarizePod works out the status of a pod from its phase, then its init
// containers while they run, then its containers.
func summarizePod(pod *corev1.Pod) podSummary {
	s := podSummary{total: len(pod.Spec.Containers), reason: string(pod.Status.Phase)}
	if pod.Status.Reason != "" {
		s.reason = pod.Status.Reason
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Reason == corev1.PodReasonSchedulingGated {
			s.reason = corev1.PodReasonSchedulingGated
		}
	}
	sidecars := map[string]bool{}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			s.total++
		}
	}
	initializing, sidecarRestarts, sidecarLastRestart := s.addInitContainers(pod, sidecars)
	if !initializing || podConditionTrue(pod, corev1.PodInitialized) {
		// Only sidecars count among the restarts of a pod past its init.
		s.restarts, s.lastRestart = sidecarRestarts, sidecarLastRestart
		s.addContainers(pod)
	}
	if pod.DeletionTimestamp != nil {
		if pod.Status.Reason == "NodeLost" {
			s.reason = "Unknown"
		} else if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			s.reason = "Terminating"
		}
	}
	return s
}

// addInitContainers counts the restarts of the init containers up to the
// first that has not finished (or, for a sidecar, started), whose state
// becomes the reason. It reports whether one has not, and the restarts of
// the sidecars among them.
func (s *podSummary) addInitContainers(pod *corev1.Pod, sidecars map[string]bool) (initializing bool, sidecarRestarts int, sidecarLast metav1.Time) {
	for i, c := range pod.Status.InitContainerStatuses {
		s.restarts += int(c.RestartCount)
		s.lastRestart = later(s.lastRestart, c.LastTerminationState.Terminated)
		if sidecars[c.Name] {
			sidecarRestarts += int(c.RestartCount)
			sidecarLast = later(sidecarLast, c.LastTerminationState.Terminated)
		}
		term, wait := c.State.Terminated, c.State.Waiting
		switch {
		case term != nil && term.ExitCode == 0:
			continue
		case sidecars[c.Name] && c.Started != nil && *c.Started:
			if c.Ready {
				s.ready++
			}
			continue
		case term != nil:
			s.reason = "Init:" + terminatedReason(term)
		case wait != nil && wait.Reason != "" && wait.Reason != "PodInitializing":
			s.reason = "Init:" + wait.Reason
		default:
			s.reason = fmt.Sprintf("Init:%d/%d", i, len(pod.Spec.InitContainers))
		}
		return true, sidecarRestarts, sidecarLast
	}
	return false, sidecarRestarts, sidecarLast
}

// addContainers adds the app containers, last first, so that the first
// container that is waiting or terminated gives the reason.
func (s *podSummary) addContainers(pod *corev1.Pod) {
	running, errorReason := false, ""
	for i := len(pod.Status.ContainerStatuses) - 1; i >= 0; i-- {
		c := pod.Status.ContainerStatuses[i]
		s.restarts += int(c.RestartCount)
		s.lastRestart = later(s.lastRestart, c.LastTerminationState.Terminated)
		switch {
		case c.State.Waiting != nil && c.State.Waiting.Reason != "":
			s.reason = c.State.Waiting.Reason
		case c.State.Terminated != nil:
			s.reason = terminatedReason(c.State.Terminated)
			if c.State.Terminated.ExitCode != 0 {
				errorReason = s.reason
			}
		case c.Ready && c.State.Running != nil:
			running = true
			s.ready++
		}
	}
	// A pod with a completed container is not Completed while another runs.
	if s.reason == "Completed" {
		switch {
		case running && podReady(pod):
			s.reason = "Running"
		case errorReason != "":
			s.reason = errorReason
		case running:
			s.reason = "NotReady"
		}
	}
}

// terminatedReason is the reason a container terminated, or its signal or
// exit code when it gave none.
func terminatedReason(t *corev1.ContainerStateTerminated) string {
	switch {
	case t.Reason != "":
		return t.Reason
	case t.Signal != 0:
		return fmt.Sprintf("Signal:%d", t.Signal)
	}
	return fmt.Sprintf("ExitCode:%d", t.ExitCode)
}

// later is the later of last and when t finished.
func later(last metav1.Time, t *corev1.ContainerStateTerminated) metav1.Time {
	if t != nil && last.Before(&t.FinishedAt) {
		return t.FinishedAt
	}
	return last
}

// podConditionTrue tells whether the pod's first condition of a type is true.
func podConditionTrue(pod *corev1.Pod, typ corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == typ {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podReady tells whether any Ready condition of the pod is true.
func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// readinessGates is how many of the pod's readiness gates are true, of all.
func readinessGates(pod *corev1.Pod) string {
	gates := pod.Spec.ReadinessGates
	if len(gates) == 0 {
		return "<none>"
	}
	met := 0
	for _, g := range gates {
		if podConditionTrue(pod, g.ConditionType) {
			met++
		}
	}
	return fmt.Sprintf("%d/%d", met, len(gates))
}
