package aggregator

import (
	"k8s.io/apimachinery/pkg/runtime"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/capstan-io/capstan/apis/apiregistration"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/printers"
	"github.com/capstan-io/capstan/registry"
	"github.com/capstan-io/capstan/storage/storagefactory"
)

// priorityAPIRegistration puts apiregistration.k8s.io first in /apis, as
// kube's aggregator lists its own group before every APIService's.
const priorityAPIRegistration = 18100

// apiServiceStore is the REST storage of apiservices, stored as kube
// stores them: JSON (kube's aggregator writes no protobuf) at
// apiregistration.k8s.io/v1 under /apiregistration.k8s.io/apiservices.
func (c Config) apiServiceStore() (*registry.Store, error) {
	gr := apiregv1.Resource("apiservices")
	prefix := "/" + gr.Group + "/" + gr.Resource
	newFunc := func() runtime.Object { return &apiregv1.APIService{} }
	newList := func() runtime.Object { return &apiregv1.APIServiceList{} }
	strategy := apiregistration.Strategy{}
	st, err := c.Storage.New(storagefactory.Spec{
		Resource: gr, KeyPrefix: prefix, StorageVersion: apiregv1.SchemeGroupVersion, MemoryVersion: apiregv1.SchemeGroupVersion,
		New: newFunc, NewList: newList, JSON: true, Defaults: strategy.Default, Attrs: registry.AttrFunc(strategy),
	})
	if err != nil {
		return nil, err
	}
	return registry.NewStore(registry.StoreConfig{
		Resource: gr, Kind: "APIService", New: newFunc, NewList: newList, KeyPrefix: prefix,
		Strategy: strategy, Storage: st, Deletion: registry.Deletion(c.Storage.Deletion),
	}), nil
}

// apiRegistrationGroup is apiregistration.k8s.io/v1: apiservices and
// their status.
func apiRegistrationGroup(store *registry.Store) endpoints.APIGroup {
	defaults := apiregistration.Strategy{}.Default
	return endpoints.APIGroup{Name: apiregv1.GroupName, Priority: priorityAPIRegistration, Versions: []endpoints.GroupVersion{{
		Version: "v1",
		Resources: []endpoints.Resource{
			{Name: "apiservices", Kind: "APIService", Storage: store, Categories: []string{"api-extensions"},
				Table: printers.For(apiregv1.SchemeGroupVersion.WithKind("APIService")), Defaulter: defaults,
				ResetFields: []string{"status"}, SupportedFields: store.SupportedFields()},
			{Name: "apiservices/status", Kind: "APIService", Storage: store.Subresource(apiregistration.StatusStrategy{}),
				Defaulter: defaults, ResetFields: []string{"spec"}, SupportedFields: store.SupportedFields()},
		},
	}}}
}
