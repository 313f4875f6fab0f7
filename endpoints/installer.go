// Package endpoints turns REST storages into HTTP: it installs the
// resources of an API group, routes each request to the handler of its verb
// and describes the group for discovery.
package endpoints

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/capstan-io/capstan/admission"
	"github.com/capstan-io/capstan/endpoints/discovery"
	"github.com/capstan-io/capstan/endpoints/handlers"
	"github.com/capstan-io/capstan/registry/rest"
)

// Resource is one resource or subresource of a group version.
type Resource struct {
	// Name is "configmaps", or "namespaces/status" for a subresource.
	Name    string
	Kind    string
	Storage rest.Storage
	// KindGroupVersion is the group version of Kind when it is not the
	// served one: a scale subresource takes and returns autoscaling/v1 Scale.
	KindGroupVersion *schema.GroupVersion

	ShortNames   []string
	Categories   []string
	SingularName string // defaults to the lower-case kind
	// StorageVersion is the group version objects are stored at, for the
	// discovery storageVersionHash; the served version when empty.
	StorageVersion *schema.GroupVersion

	Table           rest.TableConvertor
	Defaulter       func(obj runtime.Object)
	SupportedFields fields.Set
	// ResetFields are the top-level fields this endpoint never changes and
	// whose ownership it therefore never records: "status" for a resource
	// with a status subresource, "spec" for the status subresource.
	ResetFields []string
	// NoFieldManager leaves managed fields alone (subresources such as
	// scale whose object is not the stored one).
	NoFieldManager bool
}

// GroupVersion is one served version of a group and its resources.
type GroupVersion struct {
	Version   string
	Resources []Resource
}

// APIGroup is an API group to install, preferred version first.
type APIGroup struct {
	Name     string
	Priority int
	Versions []GroupVersion
}

// Config is what the installer needs from the server.
type Config struct {
	// Common is given to every scope.
	handlers.Common
	// TypeConverter gives the structured-merge-diff type of each kind, for
	// managed fields and server-side apply; nil disables both.
	TypeConverter managedfields.TypeConverter
	Convertor     runtime.ObjectConvertor
	// Versions, when set, tells each scope the other versions of its
	// resource, for admission's matchPolicy Equivalent.
	Versions *VersionIndex
}

// Install builds the scopes of a group's resources and its discovery entry.
func (c *Config) Install(g APIGroup) (map[string]*handlers.Scope, discovery.Group, error) {
	scopes := map[string]*handlers.Scope{}
	dg := discovery.Group{Name: g.Name, Priority: g.Priority}
	for _, v := range g.Versions {
		gv := schema.GroupVersion{Group: g.Name, Version: v.Version}
		dv := discovery.Version{Version: v.Version}
		for _, r := range v.Resources {
			scope, err := c.scope(gv, r)
			if err != nil {
				return nil, discovery.Group{}, err
			}
			scopes[v.Version+"/"+r.Name] = scope
			dv.Resources = append(dv.Resources, apiResource(gv, r))
		}
		sort.SliceStable(dv.Resources, func(i, j int) bool { return dv.Resources[i].Name < dv.Resources[j].Name })
		dg.Versions = append(dg.Versions, dv)
	}
	return scopes, dg, nil
}

func (c *Config) scope(gv schema.GroupVersion, r Resource) (*handlers.Scope, error) {
	resource, sub, _ := strings.Cut(r.Name, "/")
	scoper, ok := r.Storage.(rest.Scoper)
	if !ok {
		return nil, fmt.Errorf("storage of %s/%s does not tell its scope", gv, r.Name)
	}
	kind := gv.WithKind(r.Kind)
	if r.KindGroupVersion != nil {
		kind = r.KindGroupVersion.WithKind(r.Kind)
	}
	fm, err := c.fieldManager(kind, sub, r, c.Convertor)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", gv, r.Name, err)
	}
	updateFM := fm
	if drop := resetFieldsToDrop(r.ResetFields); fm != nil && len(drop) > 0 {
		if updateFM, err = c.fieldManager(kind, sub, r, withoutResetFields{ObjectConvertor: c.Convertor, fields: drop}); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", gv, r.Name, err)
		}
	}
	s := &handlers.Scope{
		FieldManager: fm, UpdateFieldManager: updateFM, Types: c.TypeConverter,
		Resource: gv.WithResource(resource), Subresource: sub, Kind: kind,
		Namespaced: scoper.NamespaceScoped(), Storage: r.Storage, Common: c.Common,
		Defaulter: r.Defaulter, Table: r.Table, SupportedFields: r.SupportedFields,
	}
	if c.Versions != nil {
		s.Versions = c.Versions.add(versionKey(gv, r), admission.Version{Resource: s.Resource, Kind: kind})
	}
	return s, nil
}

// FieldManager is the managed-fields tracker of an endpoint whose kind is
// built in, outside Install: autoscaling/v1 Scale behind a custom
// resource's /scale. It is nil when managed fields are off.
func (c *Config) FieldManager(kind schema.GroupVersionKind, sub string) (*managedfields.FieldManager, error) {
	return c.fieldManager(kind, sub, Resource{}, c.Convertor)
}

// fieldManager builds the managed-fields tracker of one endpoint.
func (c *Config) fieldManager(kind schema.GroupVersionKind, sub string, r Resource, convertor runtime.ObjectConvertor) (*managedfields.FieldManager, error) {
	if c.TypeConverter == nil || r.NoFieldManager {
		return nil, nil
	}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if len(r.ResetFields) > 0 {
		set := fieldpath.NewSet()
		for _, f := range r.ResetFields {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
		reset = map[fieldpath.APIVersion]fieldpath.Filter{
			fieldpath.APIVersion(kind.GroupVersion().String()): fieldpath.NewExcludeSetFilter(set),
		}
	}
	return managedfields.NewDefaultFieldManager(c.TypeConverter, convertor, defaulterFunc(r.Defaulter),
		c.Creater, kind, kind.GroupVersion(), sub, reset)
}

// defaulterFunc adapts a defaulting function to runtime.ObjectDefaulter.
type defaulterFunc func(obj runtime.Object)

func (f defaulterFunc) Default(obj runtime.Object) {
	if f != nil {
		f(obj)
	}
}

// verbs lists the verbs a storage serves, discovered from its capabilities.
func verbs(s rest.Storage) []string {
	if c, ok := s.(rest.Connecter); ok {
		return connectVerbs(c)
	}
	var out []string
	add := func(ok bool, vs ...string) {
		if ok {
			out = append(out, vs...)
		}
	}
	_, creater := s.(rest.Creater)
	_, namedCreater := s.(rest.NamedCreater)
	creater = creater || namedCreater
	_, deleter := s.(rest.GracefulDeleter)
	_, collection := s.(rest.CollectionDeleter)
	_, getter := s.(rest.Getter)
	_, lister := s.(rest.Lister)
	_, patcher := s.(rest.Patcher)
	_, updater := s.(rest.Updater)
	_, watcher := s.(rest.Watcher)
	add(creater, "create")
	add(deleter, "delete")
	add(collection, "deletecollection")
	add(getter, "get")
	add(lister, "list")
	add(patcher, "patch")
	add(updater, "update")
	add(watcher, "watch")
	return out
}

func apiResource(gv schema.GroupVersion, r Resource) metav1.APIResource {
	scoper, _ := r.Storage.(rest.Scoper)
	ar := metav1.APIResource{
		Name: r.Name, Namespaced: scoper.NamespaceScoped(), Kind: r.Kind, Verbs: verbs(r.Storage),
		ShortNames: r.ShortNames, Categories: r.Categories,
	}
	if r.KindGroupVersion != nil {
		ar.Group, ar.Version = r.KindGroupVersion.Group, r.KindGroupVersion.Version
	}
	if strings.Contains(r.Name, "/") {
		return ar
	}
	ar.SingularName = r.SingularName
	if ar.SingularName == "" {
		ar.SingularName = strings.ToLower(r.Kind)
	}
	if _, stored := r.Storage.(rest.Watcher); !stored {
		// Kube names no storage version of what it does not store
		// (bindings, componentstatuses, reviews): their storage is no
		// registry store, which alone is watched.
		return ar
	}
	storageGV := gv
	if r.StorageVersion != nil {
		storageGV = *r.StorageVersion
	}
	ar.StorageVersionHash = StorageVersionHash(storageGV.WithKind(r.Kind))
	return ar
}

// StorageVersionHash is the opaque hash of a resource's storage version that
// discovery shows, computed as kube does so that storage migrators agree.
func StorageVersionHash(gvk schema.GroupVersionKind) string {
	sum := sha256.Sum256([]byte(gvk.Group + "/" + gvk.Version + "/" + gvk.Kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// connectVerbs are the verbs of a Connecter's methods, as kube lists
// them: HEAD and OPTIONS have none.
func connectVerbs(c rest.Connecter) []string {
	byMethod := map[string]string{"DELETE": "delete", "GET": "get", "PATCH": "patch", "POST": "create", "PUT": "update"}
	var out []string
	for _, m := range c.ConnectMethods() {
		if v, ok := byMethod[m]; ok {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}
