package controlplane

import (
	"github.com/capstan-io/capstan/admission/always"
	"github.com/capstan-io/capstan/admission/certificates"
	"github.com/capstan-io/capstan/admission/defaulttolerationseconds"
	"github.com/capstan-io/capstan/admission/namespacelifecycle"
	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/admission/serviceaccount"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/server"
)

// AdmissionConfig selects and configures the admission plugins.
type AdmissionConfig struct {
	// Plugins are the plugins to run and the AdmissionConfiguration; a nil
	// Plugins.Enabled is kube's default set.
	Plugins plugins.Selection
	// NotReadyTolerationSeconds and UnreachableTolerationSeconds are the
	// tolerations DefaultTolerationSeconds gives pods
	// (--default-not-ready-toleration-seconds, --default-unreachable-toleration-seconds).
	NotReadyTolerationSeconds    int64
	UnreachableTolerationSeconds int64
}

// admissionDeps are what the built-in plugins are made from: the server
// (its authorizer, its post-start hooks) and the stores of the built-in
// resources.
type admissionDeps struct {
	server *server.Server
	groups []builtGroup
}

// store is the store of resource in group ("" for core), nil if not served.
func (d admissionDeps) store(group, resource string) *registry.Store {
	for _, g := range d.groups {
		if g.group.Name == group {
			return g.stores[resource]
		}
	}
	return nil
}

// installAdmission builds the admission chain the flags select
// (Config.Admission) from the plugins capstan implements, in kube's order.
func (c Config) installAdmission(s *server.Server, groups []builtGroup) error {
	d := admissionDeps{server: s, groups: groups}
	r := plugins.NewRegistry()
	c.registerAdmissionPlugins(r, d)
	sel := c.Admission.Plugins
	if sel.Enabled == nil {
		sel.Enabled = plugins.DefaultEnabled()
	}
	chain, err := r.Chain(sel, c.Logger)
	if err != nil {
		return err
	}
	for _, p := range chain {
		s.AddAdmissionPlugin(p)
	}
	return nil
}

// constant is a Factory of a plugin that takes no configuration.
func constant(p any) plugins.Factory {
	return func([]byte) (any, error) { return p, nil }
}

// registerAdmissionPlugins registers every built-in plugin capstan has.
func (c Config) registerAdmissionPlugins(r *plugins.Registry, d admissionDeps) {
	r.Register("AlwaysAdmit", constant(always.Admit{}))
	r.Register("AlwaysDeny", constant(always.Deny{}))
	r.Register("NamespaceLifecycle", constant(namespacelifecycle.New(namespaceGetter(d.store("", "namespaces")))))
	r.Register("NodeRestriction", constant(nodeRestriction(d.store("", "pods"), d.store("", "nodes"))))
	r.Register("ServiceAccount", constant(serviceaccount.New(serviceAccountGetter(d.store("", "serviceaccounts")))))
	r.Register("Priority", constant(priorityPlugin(d)))
	r.Register("DefaultTolerationSeconds", constant(defaulttolerationseconds.New(c.Admission.NotReadyTolerationSeconds, c.Admission.UnreachableTolerationSeconds)))
	// The authorizer is the chain's, as kube gives its plugins.
	r.Register("CertificateApproval", constant(certificates.NewApproval(c.Generic.Authorization)))
	r.Register("CertificateSigning", constant(certificates.NewSigning(c.Generic.Authorization)))
	r.Register("CertificateSubjectRestriction", constant(certificates.SubjectRestriction{}))
	r.Register("MutatingAdmissionWebhook", c.webhookPlugin(d, true))
	r.Register("ValidatingAdmissionWebhook", c.webhookPlugin(d, false))
	r.Register("ValidatingAdmissionPolicy", c.validatingPolicyPlugin(d))
}
