package openapi

import (
	"io"
	"log/slog"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/endpoints/discovery"
	"github.com/capstan-io/capstan/openapi/generated"
)

// catalog is shared by the tests: its definitions are built once.
var catalog = NewCatalog(scheme.Scheme, generated.GetOpenAPIDefinitions)

var (
	allVerbs    = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
	statusVerbs = []string{"get", "patch", "update"}
)

// coreGroup is core/v1 as capstan serves it.
func coreGroup() discovery.Group {
	return discovery.Group{Name: "", Versions: []discovery.Version{{Version: "v1", Resources: []metav1.APIResource{
		{Name: "configmaps", Namespaced: true, Kind: "ConfigMap", Verbs: allVerbs, ShortNames: []string{"cm"}},
		{Name: "events", Namespaced: true, Kind: "Event", Verbs: allVerbs},
		{Name: "namespaces", Kind: "Namespace", Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"}},
		{Name: "namespaces/finalize", Kind: "Namespace", Verbs: []string{"update"}},
		{Name: "namespaces/status", Kind: "Namespace", Verbs: statusVerbs},
		{Name: "secrets", Namespaced: true, Kind: "Secret", Verbs: allVerbs},
		{Name: "serviceaccounts", Namespaced: true, Kind: "ServiceAccount", Verbs: allVerbs},
	}}}}
}

// coordinationGroup is coordination.k8s.io/v1.
func coordinationGroup() discovery.Group {
	return discovery.Group{Name: "coordination.k8s.io", Priority: 16500, Versions: []discovery.Version{{Version: "v1", Resources: []metav1.APIResource{
		{Name: "leases", Namespaced: true, Kind: "Lease", Verbs: allVerbs},
	}}}}
}

// eventsGroup is events.k8s.io/v1.
func eventsGroup() discovery.Group {
	return discovery.Group{Name: "events.k8s.io", Priority: 17750, Versions: []discovery.Version{{Version: "v1", Resources: []metav1.APIResource{
		{Name: "events", Namespaced: true, Kind: "Event", Verbs: allVerbs},
	}}}}
}

// newTestService documents a registry of the given groups.
func newTestService(t testing.TB, groups ...discovery.Group) (*Service, *discovery.Registry) {
	t.Helper()
	reg := discovery.NewRegistry()
	for _, g := range groups {
		reg.Set(g)
	}
	s := NewService(Config{
		Registry: reg, Catalog: catalog, Serializer: scheme.Codecs, Version: "v1.37.2",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return s, reg
}

func metav1APIResource(name, kind string) metav1.APIResource {
	return metav1.APIResource{Name: name, Namespaced: true, Kind: kind, Verbs: allVerbs}
}
