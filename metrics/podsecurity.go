package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// The PodSecurity admission families: k8s.io/pod-security-admission's
// metrics, with the series kube creates before any request.
var (
	podSecurityEvaluations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pod_security_evaluations_total",
		Help: "Number of policy evaluations that occurred, not counting ignored or exempt requests.",
	}, []string{"decision", "policy_level", "policy_version", "mode", "request_operation", "resource", "subresource"})
	podSecurityExemptions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pod_security_exemptions_total",
		Help: "Number of exempt requests, not counting ignored or out of scope requests.",
	}, []string{"request_operation", "resource", "subresource"})
	podSecurityErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "pod_security_errors_total",
		Help: "Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation.",
	}, []string{"fatal", "request_operation", "resource", "subresource"})
)

func init() {
	register(podSecurityEvaluations, podSecurityExemptions, podSecurityErrors)
	for _, op := range []string{"create", "update"} {
		podSecurityEvaluations.WithLabelValues("allow", "privileged", "latest", "enforce", op, "pod", "")
		podSecurityExemptions.WithLabelValues(op, "pod", "")
		podSecurityExemptions.WithLabelValues(op, "controller", "")
	}
}

// PodSecurityRequest is what PodSecurity's families say of a request:
// its operation ("create", "update"), resource ("pod", "namespace",
// "controller") and subresource.
type PodSecurityRequest struct {
	Operation, Resource, Subresource string
}

// PodSecurityEvaluation counts a policy evaluation: decision "allow" or
// "deny" of the level and version (or "latest", "future") in mode
// "enforce", "audit" or "warn".
func PodSecurityEvaluation(r PodSecurityRequest, decision, level, version, mode string) {
	podSecurityEvaluations.WithLabelValues(decision, level, version, mode, r.Operation, r.Resource, r.Subresource).Inc()
}

// PodSecurityExemption counts a request exempt by namespace, user or
// runtime class.
func PodSecurityExemption(r PodSecurityRequest) {
	podSecurityExemptions.WithLabelValues(r.Operation, r.Resource, r.Subresource).Inc()
}

// PodSecurityError counts an error that prevented (fatal) or changed the
// evaluation of a request.
func PodSecurityError(r PodSecurityRequest, fatal bool) {
	podSecurityErrors.WithLabelValues(strconv.FormatBool(fatal), r.Operation, r.Resource, r.Subresource).Inc()
}
