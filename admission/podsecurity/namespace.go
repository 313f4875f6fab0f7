package podsecurity

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/warning"
)

// maxPodsToCheck bounds the pods a raised enforce level is checked against,
// as kube's.
const maxPodsToCheck = 3000

// validateNamespace refuses invalid pod-security labels and warns, when a
// namespace's enforce level rises, of the pods that violate it.
func (p *Plugin) validateNamespace(ctx context.Context, a *admission.Attributes) error {
	if a.Subresource != "" {
		return nil
	}
	ns, ok := a.Object.(*corev1.Namespace)
	if !ok {
		return apierrors.NewBadRequest("failed to decode namespace")
	}
	newPolicy, newErrs := api.PolicyToEvaluate(ns.Labels, p.defaults)
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Namespace"}, a.Name, newErrs)
	exempt := slices.Contains(p.exemptions.Namespaces, ns.Name)
	if a.Operation == admission.Create {
		if len(newErrs) > 0 {
			return invalid
		}
		if exempt {
			p.exemptWarning(ctx, ns, newPolicy)
		}
		return nil
	}
	old, ok := a.OldObject.(*corev1.Namespace)
	if !ok {
		return apierrors.NewBadRequest("failed to decode  old namespace")
	}
	oldPolicy, oldErrs := api.PolicyToEvaluate(old.Labels, p.defaults)
	if len(newErrs) > 0 && (len(oldErrs) == 0 || !reflect.DeepEqual(newErrs, oldErrs)) {
		return invalid
	}
	if newPolicy.Enforce == oldPolicy.Enforce || newPolicy.Enforce.Level == api.LevelPrivileged ||
		newPolicy.Enforce.Version == oldPolicy.Enforce.Version && api.CompareLevels(newPolicy.Enforce.Level, oldPolicy.Enforce.Level) < 1 {
		return nil
	}
	if exempt {
		p.exemptWarning(ctx, ns, newPolicy)
		return nil
	}
	for _, w := range p.podWarnings(ctx, ns.Name, newPolicy.Enforce) {
		warning.Add(ctx, w)
	}
	return nil
}

// podWarnings are kube's warnings of the pods that violate a new enforce
// level: one line per distinct reason, naming the first pod by name.
func (p *Plugin) podWarnings(ctx context.Context, namespace string, enforce api.LevelVersion) []string {
	list, err := p.pods(ctx, namespace)
	if err != nil {
		return []string{"failed to list pods while checking new PodSecurity enforce level"}
	}
	pods := make([]*corev1.Pod, len(list))
	for i := range list {
		pods[i] = &list[i]
	}
	var out []string
	pods = p.prioritize(pods)
	if total := len(pods); total > maxPodsToCheck {
		pods = pods[:maxPodsToCheck]
		out = append(out, fmt.Sprintf("new PodSecurity enforce level only checked against the first %d of %d existing pods", maxPodsToCheck, total))
	}
	type seen struct {
		first string
		count int
	}
	byReason := map[string]*seen{}
	var reasons []string
	for _, pod := range pods {
		r := policy.AggregateCheckResults(p.evaluator.EvaluatePod(enforce, &pod.ObjectMeta, &pod.Spec))
		if r.Allowed {
			continue
		}
		reason := r.ForbiddenReason()
		s, ok := byReason[reason]
		if !ok {
			s = &seen{first: pod.Name}
			byReason[reason] = s
			reasons = append(reasons, reason)
		} else if pod.Name < s.first {
			s.first = pod.Name
		}
		s.count++
	}
	if len(reasons) == 0 {
		return out
	}
	out = append(out, fmt.Sprintf("existing pods in namespace %q violate the new PodSecurity enforce level %q", namespace, enforce.String()))
	lines := make([]string, len(reasons))
	for i, reason := range reasons {
		s := byReason[reason]
		switch s.count {
		case 1:
			lines[i] = fmt.Sprintf("%s: %s", s.first, reason)
		case 2:
			lines[i] = fmt.Sprintf("%s (and 1 other pod): %s", s.first, reason)
		default:
			lines[i] = fmt.Sprintf("%s (and %d other pods): %s", s.first, s.count-1, reason)
		}
	}
	slices.Sort(lines)
	return append(out, lines...)
}

// prioritize orders pods as kube checks them: pods of exempt runtime
// classes left out, then one pod of each controller (and every pod without
// one) in list order, then the other pods of controllers.
func (p *Plugin) prioritize(pods []*corev1.Pod) []*corev1.Pod {
	var first, rest []*corev1.Pod
	seen := map[types.UID]bool{}
	for _, pod := range pods {
		if p.exemptRuntimeClass(pod.Spec.RuntimeClassName) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(pod)
		switch {
		case ref == nil:
			first = append(first, pod)
		case seen[ref.UID]:
			rest = append(rest, pod)
		default:
			first = append(first, pod)
			seen[ref.UID] = true
		}
	}
	return append(first, rest...)
}

// exemptWarning tells that an exempt namespace's labels are ignored.
func (p *Plugin) exemptWarning(ctx context.Context, ns *corev1.Namespace, pol api.Policy) {
	if pol.FullyPrivileged() || pol.Equivalent(&p.defaults) {
		return
	}
	var parts []string
	for _, m := range []struct {
		name           string
		lv             api.LevelVersion
		level, version string
	}{
		{"enforce", pol.Enforce, api.EnforceLevelLabel, api.EnforceVersionLabel},
		{"audit", pol.Audit, api.AuditLevelLabel, api.AuditVersionLabel},
		{"warn", pol.Warn, api.WarnLevelLabel, api.WarnVersionLabel},
	} {
		_, hasLevel := ns.Labels[m.level]
		_, hasVersion := ns.Labels[m.version]
		if m.lv.Level != api.LevelPrivileged && (hasLevel || hasVersion) {
			parts = append(parts, m.name+"="+m.lv.String())
		}
	}
	warning.Add(ctx, fmt.Sprintf("namespace %q is exempt from Pod Security, and the policy (%s) will be ignored", ns.Name, strings.Join(parts, ", ")))
}
