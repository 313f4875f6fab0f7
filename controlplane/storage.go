package controlplane

import (
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/storage/storagefactory"
)

// storeBuilder builds the built-in groups' stores on the storage factory
// and records each built-in resource, which the garbage collector watches
// once it may hold objects.
type storeBuilder struct {
	*storagefactory.Factory
	builtins builtinResources
	// apis tells which resources that are off by default (beta versions)
	// --runtime-config turns on: only those get storage.
	apis *endpoints.APIEnablement
}
