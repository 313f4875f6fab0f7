package controlplane

import (
	"log/slog"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagecodec"
)

// StorageFactory makes the storage of each resource on one etcd.
type StorageFactory struct {
	Client *clientv3.Client
	Prefix string // --etcd-prefix
	Scheme *runtime.Scheme
	Codecs serializer.CodecFactory
	Logger *slog.Logger
}

// StorageSpec is where and how one resource is stored.
type StorageSpec struct {
	Resource schema.GroupResource
	// KeyPrefix is the resource's part of its keys, as kube lays them out:
	// "/configmaps", "/services/specs", "/apiextensions.k8s.io/customresourcedefinitions".
	KeyPrefix string
	// StorageVersion is the version written to etcd; MemoryVersion the one
	// the registry works with (they differ for events.k8s.io events).
	StorageVersion schema.GroupVersion
	MemoryVersion  schema.GroupVersion
	New, NewList   func() runtime.Object
}

// New returns the storage of one resource.
func (f *StorageFactory) New(spec StorageSpec) (storage.Interface, error) {
	codec := storagecodec.New(f.Scheme, f.Codecs, spec.StorageVersion)
	if spec.MemoryVersion != (schema.GroupVersion{}) && spec.MemoryVersion != spec.StorageVersion {
		codec = storagecodec.NewConverting(f.Scheme, f.Codecs, spec.StorageVersion, spec.MemoryVersion)
	}
	return etcd3.New(etcd3.Config{
		Client: f.Client, Codec: codec, NewFunc: spec.New, NewListFunc: spec.NewList,
		Prefix: f.Prefix, ResourcePrefix: spec.KeyPrefix, GroupResource: spec.Resource, Logger: f.Logger,
	})
}
