package controlplane

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/printers"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage/storagefactory"
)

// resourceSpec describes one built-in resource: everything needed to store
// it, serve it and show it in discovery.
type resourceSpec struct {
	name      string // plural, e.g. "configmaps"
	kind      string
	keyPrefix string // defaults to "/" + name
	new       func() runtime.Object
	newList   func() runtime.Object
	strategy  registry.Strategy
	// ga, for a beta version, is its GA version, whose objects it shares:
	// both are stored at storageVersion(resource, ga).
	ga         *schema.GroupVersion
	shortNames []string
	categories []string
	// status, when set, serves name/status with this strategy.
	status registry.Strategy
	// scale, when set, serves name/scale (autoscaling/v1 Scale).
	scale *registry.ScaleAccessor
	// returnDeleted makes DELETE answer with the object.
	returnDeleted bool
	ttl           func(obj runtime.Object) uint64
	// table, when set, replaces the kind's printer (a beta version prints
	// through its GA version's).
	table rest.TableConvertor
}

// build makes the store of a resource and its endpoint resources.
func (f *storeBuilder) build(gv schema.GroupVersion, spec resourceSpec) (*registry.Store, []endpoints.Resource, error) {
	if spec.keyPrefix == "" {
		spec.keyPrefix = "/" + spec.name
	}
	gr := schema.GroupResource{Group: gv.Group, Resource: spec.name}
	base := gv
	if spec.ga != nil {
		base = *spec.ga
	}
	storageGV := storageVersion(gr, base)
	// Discovery's storageVersionHash names the storage version when it is
	// not the served one.
	var hashVersion *schema.GroupVersion
	if storageGV != gv {
		hashVersion = &storageGV
	}
	st, err := f.New(storagefactory.Spec{
		Resource: gr, KeyPrefix: spec.keyPrefix, StorageVersion: storageGV, MemoryVersion: gv,
		New: spec.new, NewList: spec.newList, Defaults: defaulter(spec.strategy),
		Attrs: registry.AttrFunc(spec.strategy),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("storage of %s: %w", gr, err)
	}
	store := registry.NewStore(registry.StoreConfig{
		Resource: gr, Kind: spec.kind, New: spec.new, NewList: spec.newList, KeyPrefix: spec.keyPrefix,
		Strategy: spec.strategy, Storage: st, TTL: spec.ttl, ReturnDeletedObject: spec.returnDeleted,
		MayCreate: f.builtins.add(gr, st, spec.keyPrefix),
		Deletion:  registry.Deletion(f.Deletion),
	})
	main := endpoints.Resource{
		Name: spec.name, Kind: spec.kind, Storage: store, ShortNames: spec.shortNames,
		Categories: spec.categories, StorageVersion: hashVersion,
		Defaulter: defaulter(spec.strategy), SupportedFields: store.SupportedFields(),
		Table: printers.For(gv.WithKind(spec.kind)),
	}
	if spec.table != nil {
		main.Table = spec.table
	}
	out := []endpoints.Resource{main}
	if spec.status != nil {
		out[0].ResetFields = []string{"status"}
		out = append(out, endpoints.Resource{
			Name: spec.name + "/status", Kind: spec.kind, Storage: store.Subresource(spec.status),
			Defaulter: defaulter(spec.strategy), ResetFields: []string{"spec"}, StorageVersion: hashVersion,
		})
	}
	if spec.scale != nil {
		// Built-in kinds keep their desired replicas at spec.replicas.
		scale := *spec.scale
		scale.GroupVersion = gv
		scale.ReplicasPaths = managedfields.ResourcePathMappings{gv.String(): fieldpath.MakePathOrDie("spec", "replicas")}
		out = append(out, endpoints.Resource{
			Name: spec.name + "/scale", Kind: "Scale", KindGroupVersion: &autoscalingV1, Storage: store.Scale(scale),
		})
	}
	return store, out, nil
}

func defaulter(s registry.Strategy) func(runtime.Object) {
	if d, ok := s.(registry.Defaulter); ok {
		return d.Default
	}
	return nil
}
