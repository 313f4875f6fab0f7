package controlplane

import "github.com/capstan-io/capstan/storage/storagefactory"

// StorageFactory is the factory the kube server builds its resources'
// storage with. It lives in the storage layer, so that the CRD server can
// use it without importing the kube server; the name stays for app, which
// configures it.
type StorageFactory = storagefactory.Factory

// DefaultCountPollPeriod is --etcd-count-metric-poll-period's default.
const DefaultCountPollPeriod = storagefactory.DefaultCountPollPeriod

// storeBuilder builds the built-in groups' stores on the storage factory
// and records each built-in resource, which the garbage collector watches
// once it may hold objects.
type storeBuilder struct {
	*storagefactory.Factory
	builtins builtinResources
}
