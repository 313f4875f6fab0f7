// Package storagefactory makes the storage of each resource on one etcd:
// an etcd3 store with the resource's codec and value transformer, behind a
// watch cache, and keeps the stores' object counts for API Priority and
// Fairness. The kube server and the CRD server both build their resources'
// storage with it.
package storagefactory

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/cache"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagecodec"
	"github.com/capstan-io/capstan/storage/value"
)

// Factory makes the storage of each resource on one etcd: an etcd3
// store, behind a watch cache unless WatchCache is off.
type Factory struct {
	Client *clientv3.Client
	Prefix string // --etcd-prefix
	Scheme *runtime.Scheme
	Codecs serializer.CodecFactory
	Logger *slog.Logger
	// WatchCache puts a watch cache in front of every resource but events
	// (--watch-cache), as kube does.
	WatchCache bool
	// Compactions tells the caches what etcd history is gone.
	Compactions cache.CompactRevisioner
	// Transformers encrypt each resource's values at rest
	// (--encryption-provider-config). nil stores them as they are.
	Transformers ResourceTransformers
	// CountPollPeriod is how often the stats of every resource's storage
	// are read (--etcd-count-metric-poll-period); 0 never.
	CountPollPeriod time.Duration
	// Overrides are the etcd clients of the resources stored on other
	// servers (--etcd-servers-overrides).
	Overrides map[schema.GroupResource]*clientv3.Client
	// CacheOff are the resources served without a watch cache
	// (--watch-cache-sizes=resource#0).
	CacheOff map[schema.GroupResource]bool
	// Deletion is how the stores of these resources delete: kube carries
	// --delete-collection-workers and --enable-garbage-collector with its
	// storage options too.
	Deletion Deletion

	mu     sync.Mutex // guards caches and running
	caches []*cache.Cacher
	// running is RunCaches' context: the caches of resources served for
	// a while (NewServed) run within it.
	running context.Context
	counts  objectCounts
}

// Spec is where and how one resource is stored.
type Spec struct {
	Resource schema.GroupResource
	// KeyPrefix is the resource's part of its keys, as kube lays them out:
	// "/configmaps", "/services/specs", "/apiextensions.k8s.io/customresourcedefinitions".
	KeyPrefix string
	// StorageVersion is the version written to etcd; MemoryVersion the one
	// the registry works with (they differ for events.k8s.io events).
	StorageVersion schema.GroupVersion
	MemoryVersion  schema.GroupVersion
	New, NewList   func() runtime.Object
	// JSON stores objects as JSON rather than protobuf, for types without
	// a protobuf encoding (custom resources).
	JSON bool
	// Codec, if set, replaces the scheme's codec (custom resources).
	Codec runtime.Codec
	// NoWatchCache serves the resource from etcd alone.
	NoWatchCache bool
	// Defaults, if set, defaults every object decoded from etcd (the
	// strategy's Default), so that reads need not change what they read.
	Defaults func(runtime.Object)
	// Attrs, if set, is the resource's attribute function (registry.AttrFunc
	// of its strategy), which its watch cache keeps the result of.
	Attrs storage.AttrFunc
}

// New returns the storage of one resource.
func (f *Factory) New(spec Spec) (storage.Interface, error) {
	var codec runtime.Codec
	switch {
	case spec.Codec != nil:
		codec = spec.Codec
	case spec.JSON:
		codec = storagecodec.NewJSON(f.Scheme, f.Codecs, spec.StorageVersion)
	case spec.MemoryVersion != (schema.GroupVersion{}) && spec.MemoryVersion != spec.StorageVersion:
		codec = storagecodec.NewConverting(f.Scheme, f.Codecs, spec.StorageVersion, spec.MemoryVersion)
	default:
		codec = storagecodec.New(f.Scheme, f.Codecs, spec.StorageVersion)
	}
	codec = storagecodec.WithDefaults(codec, spec.Defaults)
	store, err := etcd3.New(etcd3.Config{
		Client: f.clientFor(spec.Resource), Codec: codec, NewFunc: spec.New, NewListFunc: spec.NewList,
		Prefix: f.Prefix, ResourcePrefix: spec.KeyPrefix, GroupResource: spec.Resource, Logger: f.Logger,
		Transformer: f.transformer(spec.Resource), Sizes: f.counts.sizesOf(spec.Resource),
	})
	if err == nil {
		f.counts.add(spec.Resource, store)
	}
	if err != nil || !f.cached(spec) {
		return store, err
	}
	c, err := f.newCache(spec, store)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.caches = append(f.caches, c)
	f.mu.Unlock()
	return c, nil
}

// cached tells whether spec's resource gets a watch cache.
func (f *Factory) cached(spec Spec) bool {
	return f.WatchCache && !spec.NoWatchCache && spec.Resource.Resource != "events" && !f.CacheOff[spec.Resource]
}

// clientFor is the etcd client of gr's objects.
func (f *Factory) clientFor(gr schema.GroupResource) *clientv3.Client {
	if c, ok := f.Overrides[gr]; ok {
		return c
	}
	return f.Client
}

func (f *Factory) newCache(spec Spec, store storage.Interface) (*cache.Cacher, error) {
	c, err := cache.New(cache.Config{
		Storage: store, NewFunc: spec.New, NewListFunc: spec.NewList, ResourcePrefix: spec.KeyPrefix,
		Codec: f.cacheCodec(spec), Attrs: spec.Attrs, GroupResource: spec.Resource, Compactions: f.Compactions, Logger: f.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("watch cache of %s: %w", spec.Resource, err)
	}
	return c, nil
}

// cacheCodec is what the watch cache of spec's resource keeps its objects
// encoded with: protobuf at the version of the objects in memory, so that
// decoding them converts nothing (and, as they are defaulted, defaults
// nothing). nil, objects kept decoded, for types without protobuf and
// custom resources (JSON, unstructured).
func (f *Factory) cacheCodec(spec Spec) runtime.Codec {
	if spec.Codec != nil || spec.JSON {
		return nil
	}
	gv := spec.MemoryVersion
	if gv.Empty() {
		gv = spec.StorageVersion
	}
	return storagecodec.New(f.Scheme, f.Codecs, gv)
}

// ResourceTransformers gives the transformer of a resource's values.
type ResourceTransformers interface {
	For(schema.GroupResource) value.Transformer
}

// transformer is the transformer of gr's values. events.k8s.io events are
// core events in etcd, and so in the encryption configuration, as in kube.
func (f *Factory) transformer(gr schema.GroupResource) value.Transformer {
	if f.Transformers == nil {
		return nil
	}
	if gr == (schema.GroupResource{Group: "events.k8s.io", Resource: "events"}) {
		gr.Group = ""
	}
	return f.Transformers.For(gr)
}

// RunCaches fills and keeps current every watch cache until ctx is done.
// Until a cache is filled, its requests go to etcd.
func (f *Factory) RunCaches(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running = ctx
	for _, c := range f.caches {
		go c.Run(ctx)
	}
}

// CachesReady is the readiness check of the watch caches.
func (f *Factory) CachesReady() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.caches {
		if err := c.ReadinessCheck(); err != nil {
			return err
		}
	}
	return nil
}

// Deletion is registry.Deletion, the same fields, so that a store's
// config converts it: registry.Deletion(f.Deletion). Storage may not
// import the registry above it.
type Deletion struct {
	CollectionWorkers  int
	NoGarbageCollector bool
}
