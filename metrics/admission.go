package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The admission and audit families: kube's admission/metrics and
// audit's metrics.
var (
	admissionStep = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_admission_step_admission_duration_seconds",
		Help:    "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
		Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5},
	}, []string{"type", "operation", "rejected"})
	admissionStepSummary = prometheus.NewSummaryVec(prometheus.SummaryOpts{
		Name:   "apiserver_admission_step_admission_duration_seconds_summary",
		Help:   "Admission sub-step latency summary in seconds, broken out for each operation and API resource and step type (validate or admit).",
		MaxAge: 5 * time.Hour,
	}, []string{"type", "operation", "rejected"})
	admissionController = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "apiserver_admission_controller_admission_duration_seconds",
		Help:    "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
		Buckets: []float64{0.005, 0.025, 0.1, 0.5, 1.0, 2.5},
	}, []string{"name", "type", "operation", "rejected"})
	auditEvents = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "apiserver_audit_event_total",
		Help: "Counter of audit events generated and sent to the audit backend.",
	})
	auditRejected = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "apiserver_audit_requests_rejected_total",
		Help: "Counter of apiserver requests rejected due to an error in audit logging backend.",
	})
	auditErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_audit_error_total",
		Help: "Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.",
	}, []string{"plugin"})
	auditLevels = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "apiserver_audit_level_total",
		Help: "Counter of policy levels for audit events (1 per request).",
	}, []string{"level"})
)

func init() {
	register(admissionStep, admissionStepSummary, admissionController, auditEvents, auditRejected, auditErrors, auditLevels)
}

// AdmissionStep records the mutating ("admit") or validating
// ("validate") step of an operation (CREATE, UPDATE, DELETE, CONNECT)
// that began at start.
func AdmissionStep(step, operation string, start time.Time, rejected bool) {
	d := time.Since(start).Seconds()
	r := strconv.FormatBool(rejected)
	admissionStep.WithLabelValues(step, operation, r).Observe(d)
	admissionStepSummary.WithLabelValues(step, operation, r).Observe(d)
}

// AdmissionPlugin records one call of the plugin kube calls name in the
// mutating ("admit") or validating ("validate") step of an operation,
// begun at start.
func AdmissionPlugin(name, step, operation string, start time.Time, rejected bool) {
	admissionController.WithLabelValues(name, step, operation, strconv.FormatBool(rejected)).Observe(time.Since(start).Seconds())
}

// AuditEvent counts an audit event sent to a backend.
func AuditEvent() { auditEvents.Inc() }

// AuditLevel counts a request's audit policy level.
func AuditLevel(level string) { auditLevels.WithLabelValues(level).Inc() }

// AuditError counts n events the backend plugin failed to write.
func AuditError(plugin string, n int) { auditErrors.WithLabelValues(plugin).Add(float64(n)) }

// AuditRejected counts a request refused because its event could not be
// written.
func AuditRejected() { auditRejected.Inc() }
