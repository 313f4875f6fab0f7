package controlplane

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/printers"
	"github.com/capstan-io/capstan/registry"
)

// betaKind is the Go types of a resource's beta version.
type betaKind struct {
	new, newList func() runtime.Object
}

// betaVersion is beta, a version of the GA resources specs (served at ga)
// that kube 1.37 serves only when --runtime-config turns it on, each
// resource of kinds. A beta resource is its GA resource under other types,
// as autoscaling/v1 is autoscaling/v2's: its objects are stored at the GA
// resource's storage version, so that both versions read and write one object, and
// converted to the beta types in the codec; its strategies and table are
// the GA ones, through conversion. A resource left off gets no storage (no
// watch cache): its entries only tell APIEnablement that it exists.
func (f *storeBuilder) betaVersion(beta, ga schema.GroupVersion, specs []resourceSpec, kinds map[string]betaKind) (endpoints.GroupVersion, error) {
	version := endpoints.GroupVersion{Version: beta.Version}
	for _, spec := range specs {
		kind, ok := kinds[spec.name]
		if !ok {
			continue
		}
		if !f.apis.ResourceOn(beta.WithResource(spec.name)) {
			version.Resources = append(version.Resources, endpoints.Resource{Name: spec.name})
			if spec.status != nil {
				version.Resources = append(version.Resources, endpoints.Resource{Name: spec.name + "/status"})
			}
			continue
		}
		b, err := f.betaSpec(ga, spec, kind)
		if err != nil {
			return version, err
		}
		_, resources, err := f.build(beta, b)
		if err != nil {
			return version, err
		}
		version.Resources = append(version.Resources, resources...)
	}
	return version, nil
}

// betaSpec is the spec of the beta version of spec, a GA resource.
func (f *storeBuilder) betaSpec(ga schema.GroupVersion, spec resourceSpec, kind betaKind) (resourceSpec, error) {
	b := spec
	b.ga, b.new, b.newList = &ga, kind.new, kind.newList
	var err error
	if b.strategy, err = registry.Converted(spec.strategy, f.Scheme, spec.new); err != nil {
		return b, fmt.Errorf("%s: %w", spec.name, err)
	}
	if spec.status != nil {
		if b.status, err = registry.Converted(spec.status, f.Scheme, spec.new); err != nil {
			return b, fmt.Errorf("%s/status: %w", spec.name, err)
		}
	}
	b.table = printers.Converted(printers.For(ga.WithKind(spec.kind)), f.Scheme, spec.new, spec.newList)
	return b, nil
}

// betaGV is a beta version of a group and its resources.
type betaGV struct {
	gv    schema.GroupVersion
	kinds map[string]betaKind
}

// addBetas adds to bg, the GA version ga of a group built from specs, its
// beta versions, after it: GA stays the preferred version.
func (f *storeBuilder) addBetas(bg *builtGroup, ga schema.GroupVersion, specs []resourceSpec, betas ...betaGV) error {
	for _, b := range betas {
		v, err := f.betaVersion(b.gv, ga, specs, b.kinds)
		if err != nil {
			return err
		}
		bg.group.Versions = append(bg.group.Versions, v)
	}
	return nil
}

// kindOf is the betaKind of the Go types T and L.
func kindOf[T, L any, PT interface {
	*T
	runtime.Object
}, PL interface {
	*L
	runtime.Object
}]() betaKind {
	return betaKind{new: func() runtime.Object { return PT(new(T)) }, newList: func() runtime.Object { return PL(new(L)) }}
}
