package podsecurity

import (
	"strings"

	"k8s.io/pod-security-admission/api"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/metrics"
)

// servedVersion is the policy version this server is (kube's API
// version): a namespace asking for a later one is "future" in metrics.
var servedVersion = api.MajorMinorVersion(1, 37)

// request is a's labels in PodSecurity's families.
func request(a *admission.Attributes) metrics.PodSecurityRequest {
	r := metrics.PodSecurityRequest{Operation: strings.ToLower(string(a.Operation)), Resource: "controller", Subresource: a.Subresource}
	if a.Resource.Group == "" {
		switch a.Resource.Resource {
		case "pods":
			r.Resource = "pod"
		case "namespaces":
			r.Resource = "namespace"
		}
	}
	return r
}

// recordEvaluation counts an evaluation of policy in mode.
func recordEvaluation(a *admission.Attributes, allowed bool, policy api.LevelVersion, mode string) {
	decision := "allow"
	if !allowed {
		decision = "deny"
	}
	version := policy.Version.String()
	switch {
	case policy.Version.Latest() || policy.Level == api.LevelPrivileged:
		version = "latest"
	case servedVersion.Older(policy.Version):
		version = "future"
	}
	metrics.PodSecurityEvaluation(request(a), decision, string(policy.Level), version, mode)
}
