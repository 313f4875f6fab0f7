package core

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// probeKind is which of a container's three probes is validated.
type probeKind int

const (
	liveness probeKind = iota
	readiness
	startup
)

// validateProbe checks a probe: one handler, non-negative timings, and the
// rules of its kind.
func (c containerContext) validateProbe(p *corev1.Probe, fldPath *field.Path, kind probeKind) field.ErrorList {
	if p == nil {
		return nil
	}
	h := handler{exec: p.Exec, httpGet: p.HTTPGet, tcpSocket: p.TCPSocket, grpc: p.GRPC}
	errs := c.validateHandler(h, fldPath)
	for _, f := range []struct {
		name  string
		value int32
	}{
		{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds},
		{"periodSeconds", p.PeriodSeconds}, {"successThreshold", p.SuccessThreshold},
		{"failureThreshold", p.FailureThreshold},
	} {
		errs = append(errs, apivalidation.ValidateNonnegativeField(int64(f.value), fldPath.Child(f.name))...)
	}
	if g := p.TerminationGracePeriodSeconds; g != nil && *g <= 0 {
		errs = append(errs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), *g, "must be greater than 0"))
	}
	switch {
	case kind != readiness && p.SuccessThreshold != 1:
		errs = append(errs, field.Invalid(fldPath.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
	case kind == readiness && p.TerminationGracePeriodSeconds != nil:
		errs = append(errs, field.Invalid(fldPath.Child("terminationGracePeriodSeconds"), p.TerminationGracePeriodSeconds, "must not be set for readinessProbes"))
	}
	return errs
}

// handler is the union of probe and lifecycle handlers.
type handler struct {
	exec      *corev1.ExecAction
	httpGet   *corev1.HTTPGetAction
	tcpSocket *corev1.TCPSocketAction
	grpc      *corev1.GRPCAction
	sleep     *corev1.SleepAction
}

// validateHandler requires exactly one action and validates it. The second
// and later actions are forbidden, in kube's order.
func (c containerContext) validateHandler(h handler, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	n := 0
	one := func(set bool, name string, validate func() field.ErrorList) {
		if !set {
			return
		}
		if n > 0 {
			errs = append(errs, field.Forbidden(fldPath.Child(name), "may not specify more than 1 handler type"))
			return
		}
		n++
		errs = append(errs, validate()...)
	}
	one(h.exec != nil, "exec", func() field.ErrorList {
		if len(h.exec.Command) == 0 {
			return field.ErrorList{field.Required(fldPath.Child("exec", "command"), "")}
		}
		return nil
	})
	one(h.httpGet != nil, "httpGet", func() field.ErrorList { return validateHTTPGetAction(h.httpGet, fldPath.Child("httpGet")) })
	one(h.tcpSocket != nil, "tcpSocket", func() field.ErrorList {
		return validatePortNumOrName(h.tcpSocket.Port, fldPath.Child("tcpSocket", "port"))
	})
	one(h.grpc != nil, "grpc", func() field.ErrorList { return validateGRPCAction(h.grpc, fldPath.Child("grpc")) })
	one(h.sleep != nil, "sleep", func() field.ErrorList { return c.validateSleep(h.sleep, fldPath.Child("sleep")) })
	if n == 0 {
		errs = append(errs, field.Required(fldPath, "must specify a handler type"))
	}
	return errs
}

func validateHTTPGetAction(h *corev1.HTTPGetAction, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if h.Path == "" {
		errs = append(errs, field.Required(fldPath.Child("path"), ""))
	}
	errs = append(errs, validatePortNumOrName(h.Port, fldPath.Child("port"))...)
	if h.Scheme != corev1.URISchemeHTTP && h.Scheme != corev1.URISchemeHTTPS {
		errs = append(errs, field.NotSupported(fldPath.Child("scheme"), h.Scheme, []string{string(corev1.URISchemeHTTP), string(corev1.URISchemeHTTPS)}))
	}
	for _, header := range h.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(header.Name) {
			errs = append(errs, field.Invalid(fldPath.Child("httpHeaders"), header.Name, msg))
		}
	}
	return errs
}

func validateGRPCAction(g *corev1.GRPCAction, fldPath *field.Path) field.ErrorList {
	errs := validatePortNumOrName(intstr.FromInt32(g.Port), fldPath.Child("port"))
	if g.Mode != nil && *g.Mode != corev1.GRPCProbeModePlaintext && *g.Mode != corev1.GRPCProbeModeTLS {
		errs = append(errs, field.NotSupported(fldPath.Child("mode"), *g.Mode,
			[]string{string(corev1.GRPCProbeModePlaintext), string(corev1.GRPCProbeModeTLS)}))
	}
	return errs
}

// validatePortNumOrName checks a port given by number or by IANA name.
func validatePortNumOrName(port intstr.IntOrString, fldPath *field.Path) field.ErrorList {
	if port.Type == intstr.Int {
		return validatePortNum(port.IntValue(), fldPath)
	}
	var errs field.ErrorList
	for _, msg := range validation.IsValidPortName(port.StrVal) {
		errs = append(errs, field.Invalid(fldPath, port.StrVal, msg))
	}
	return errs
}

// validateSleep bounds a sleep by the pod's grace period; a missing grace
// period is reported elsewhere.
func (c containerContext) validateSleep(s *corev1.SleepAction, fldPath *field.Path) field.ErrorList {
	if c.grace != nil && (s.Seconds < 0 || s.Seconds > *c.grace) {
		return field.ErrorList{field.Invalid(fldPath, s.Seconds,
			fmt.Sprintf("must be non-negative and less than terminationGracePeriodSeconds (%d)", *c.grace))}
	}
	return nil
}

func (c containerContext) validateLifecycle(l *corev1.Lifecycle, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, h := range []struct {
		name string
		h    *corev1.LifecycleHandler
	}{{"postStart", l.PostStart}, {"preStop", l.PreStop}} {
		if h.h != nil {
			lh := handler{exec: h.h.Exec, httpGet: h.h.HTTPGet, tcpSocket: h.h.TCPSocket, sleep: h.h.Sleep}
			errs = append(errs, c.validateHandler(lh, fldPath.Child(h.name))...)
		}
	}
	if l.StopSignal != nil {
		errs = append(errs, validateStopSignal(*l.StopSignal, fldPath.Child("stopSignal"), c.os)...)
	}
	return errs
}

// linuxStopSignals are the signals a Linux container may be stopped with.
var linuxStopSignals = func() sets.Set[string] {
	s := sets.New("SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP",
		"SIGILL", "SIGINT", "SIGIO", "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR",
		"SIGQUIT", "SIGSEGV", "SIGSTKFLT", "SIGSTOP", "SIGSYS", "SIGTERM", "SIGTRAP", "SIGTSTP",
		"SIGTTIN", "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2", "SIGVTALRM", "SIGWINCH", "SIGXCPU",
		"SIGXFSZ", "SIGRTMIN", "SIGRTMAX")
	for i := 1; i <= 15; i++ {
		s.Insert(fmt.Sprintf("SIGRTMIN+%d", i))
	}
	for i := 1; i <= 14; i++ {
		s.Insert(fmt.Sprintf("SIGRTMAX-%d", i))
	}
	return s
}()

var windowsStopSignals = sets.New("SIGKILL", "SIGTERM")

func validateStopSignal(sig corev1.Signal, fldPath *field.Path, os *corev1.PodOS) field.ErrorList {
	switch {
	case os == nil:
		return field.ErrorList{field.Forbidden(fldPath, "may not be set for containers with empty `spec.os.name`")}
	case os.Name == corev1.Windows && !windowsStopSignals.Has(string(sig)):
		return field.ErrorList{field.NotSupported(fldPath, sig, sets.List(windowsStopSignals))}
	case os.Name == corev1.Linux && !linuxStopSignals.Has(string(sig)):
		return field.ErrorList{field.NotSupported(fldPath, sig, sets.List(linuxStopSignals))}
	}
	return nil
}

var (
	containerRestartPolicies = []string{string(corev1.ContainerRestartPolicyAlways),
		string(corev1.ContainerRestartPolicyNever), string(corev1.ContainerRestartPolicyOnFailure)}
	restartRuleActions = []string{string(corev1.ContainerRestartRuleActionRestart),
		string(corev1.ContainerRestartRuleActionRestartAllContainers)}
	restartRuleOperators = []string{string(corev1.ContainerRestartRuleOnExitCodesOpIn),
		string(corev1.ContainerRestartRuleOnExitCodesOpNotIn)}
)

// validateContainerRestartPolicy checks a container's restartPolicy and
// restartPolicyRules, of any container kind (ContainerRestartRules and
// RestartAllContainersOnContainerExits are on by default in 1.37).
func validateContainerRestartPolicy(policy *corev1.ContainerRestartPolicy, rules []corev1.ContainerRestartRule, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case policy == nil && len(rules) == 0:
		return nil
	case policy == nil:
		errs = append(errs, field.Required(fldPath.Child("restartPolicy"), "must specify restartPolicy when restart rules are used"))
	case !sets.New(containerRestartPolicies...).Has(string(*policy)):
		errs = append(errs, field.NotSupported(fldPath.Child("restartPolicy"), *policy, containerRestartPolicies))
	}
	if len(rules) > 20 {
		errs = append(errs, field.TooMany(fldPath.Child("restartPolicyRules"), len(rules), 20))
	}
	for i, rule := range rules {
		path := fldPath.Child("restartPolicyRules").Index(i)
		if !sets.New(restartRuleActions...).Has(string(rule.Action)) {
			errs = append(errs, field.NotSupported(path.Child("action"), rule.Action, restartRuleActions))
		}
		if rule.ExitCodes == nil {
			errs = append(errs, field.Required(path.Child("exitCodes"), "must be specified"))
			continue
		}
		if !sets.New(restartRuleOperators...).Has(string(rule.ExitCodes.Operator)) {
			errs = append(errs, field.NotSupported(path.Child("exitCodes", "operator"), rule.ExitCodes.Operator, restartRuleOperators))
		}
		if len(rule.ExitCodes.Values) > 255 {
			errs = append(errs, field.TooMany(path.Child("exitCodes", "values"), len(rule.ExitCodes.Values), 255))
		}
	}
	return errs
}

// validateResizePolicy checks the in-place resize policies of a container.
func validateResizePolicy(policies []corev1.ContainerResizePolicy, fldPath *field.Path, podRestart corev1.RestartPolicy) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.ResourceName]()
	for i, p := range policies {
		if seen.Has(p.ResourceName) {
			errs = append(errs, field.Duplicate(fldPath.Index(i), p.ResourceName))
		}
		seen.Insert(p.ResourceName)
		switch p.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			errs = append(errs, field.Required(fldPath, ""))
		default:
			errs = append(errs, field.NotSupported(fldPath, p.ResourceName, []string{"cpu", "memory"}))
		}
		switch p.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			errs = append(errs, field.Required(fldPath, ""))
		default:
			errs = append(errs, field.NotSupported(fldPath, p.RestartPolicy, []string{string(corev1.NotRequired), string(corev1.RestartContainer)}))
		}
		if podRestart == corev1.RestartPolicyNever && p.RestartPolicy != corev1.NotRequired {
			errs = append(errs, field.Invalid(fldPath, p.RestartPolicy, "must be 'NotRequired' when pod `restartPolicy` is 'Never'"))
		}
	}
	return errs
}
