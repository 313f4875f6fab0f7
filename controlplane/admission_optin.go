package controlplane

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/admission/antiaffinity"
	"github.com/capstan-io/capstan/admission/eventratelimit"
	"github.com/capstan-io/capstan/admission/imagepolicy"
	"github.com/capstan-io/capstan/admission/ownerrefs"
	"github.com/capstan-io/capstan/admission/plugins"
	"github.com/capstan-io/capstan/admission/podnodeselector"
	"github.com/capstan-io/capstan/admission/podtolerationrestriction"
	"github.com/capstan-io/capstan/endpoints/discovery"
)

// registerOptInPlugins registers the plugins kube leaves off by default
// that read namespaces, the authorizer or a configuration of their own.
func (c Config) registerOptInPlugins(r *plugins.Registry, d admissionDeps) {
	namespaces := namespaceGetter(d.store("", "namespaces"))
	r.Register("PodNodeSelector", func(cfg []byte) (any, error) {
		return podnodeselector.New(cfg, podnodeselector.NamespaceGetter(namespaces))
	})
	r.Register("PodTolerationRestriction", func(cfg []byte) (any, error) {
		return podtolerationrestriction.New(cfg, podtolerationrestriction.NamespaceGetter(namespaces))
	})
	r.Register("OwnerReferencesPermissionEnforcement", constant(ownerrefs.New(c.Generic.Authorization, discoveryMapper(d.server.Discovery()))))
	r.Register("LimitPodHardAntiAffinityTopology", constant(antiaffinity.Plugin{}))
	r.Register("EventRateLimit", func(cfg []byte) (any, error) { return eventratelimit.New(cfg) })
	r.Register("ImagePolicyWebhook", func(cfg []byte) (any, error) { return imagepolicy.New(cfg) })
}

// discoveryMapper maps a kind to the resources the chain serves it as in
// a version, from the chain's discovery (built-in, custom and aggregated
// groups alike), as kube's plugin asks its discovery REST mapper.
func discoveryMapper(reg *discovery.Registry) ownerrefs.Mapper {
	return func(gk schema.GroupKind, version string) ([]ownerrefs.Mapping, error) {
		var out []ownerrefs.Mapping
		g, _ := reg.Group(gk.Group)
		for _, v := range g.Versions {
			if v.Version != version {
				continue
			}
			for _, r := range v.Resources {
				if r.Kind == gk.Kind && !strings.Contains(r.Name, "/") {
					out = append(out, ownerrefs.Mapping{Resource: gk.WithVersion(version).GroupVersion().WithResource(r.Name), Namespaced: r.Namespaced})
				}
			}
		}
		if len(out) == 0 {
			return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: []string{version}}
		}
		return out, nil
	}
}
