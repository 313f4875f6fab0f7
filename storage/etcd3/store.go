// Package etcd3 implements storage.Interface on etcd v3, with the key
// layout, value encoding and resourceVersion semantics of kube-apiserver,
// so that capstan and kube-apiserver can read each other's data.
//
// Stats tells a store's key count and the average stored size of the
// values it read; storagefactory reads them every
// --etcd-count-metric-poll-period for APF's estimate of lists.
package etcd3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/storage"
	"github.com/capstan-io/capstan/storage/value"
)

// DefaultPrefix is kube-apiserver's default --etcd-prefix.
const DefaultPrefix = "/registry"

// Config describes the storage of one resource.
type Config struct {
	// Client reaches etcd. Required.
	Client *clientv3.Client
	// Codec encodes objects for storage and decodes stored values
	// (storagecodec.New for built-in types). Required.
	Codec runtime.Codec
	// NewFunc returns an empty object of the resource, NewListFunc an empty
	// list. Both required.
	NewFunc     func() runtime.Object
	NewListFunc func() runtime.Object
	// Prefix is put in front of every key in etcd. "" means DefaultPrefix.
	Prefix string
	// ResourcePrefix starts every key the store accepts, e.g. "/configmaps".
	// Required: no key outside it is ever read or written.
	ResourcePrefix string
	// GroupResource names the resource in messages.
	GroupResource schema.GroupResource
	// LeaseReuse is how long an etcd lease is shared by objects written
	// with similar TTLs. 0 means one minute, as in kube.
	LeaseReuse time.Duration
	// Logger receives what is worth logging. nil discards.
	Logger *slog.Logger
	// Transformer encrypts values on their way to etcd and decrypts them
	// on their way back (--encryption-provider-config), with the etcd key
	// as authenticated data. nil means value.Identity, which, as in kube,
	// refuses to read encrypted values.
	Transformer value.Transformer
	// Sizes, if set, is shared with the other stores of the same keys
	// (a custom resource's, one per served version), so that what one
	// reads counts for the Stats of all. nil gives the store its own.
	Sizes *SizeEstimator
}

// Store is a storage.Interface for one resource on etcd.
type Store struct {
	client        *clientv3.Client
	codec         runtime.Codec
	newFunc       func() runtime.Object
	newListFunc   func() runtime.Object
	keys          keyspace
	groupResource schema.GroupResource
	leases        *leaseManager
	logger        *slog.Logger
	transformer   value.Transformer
	sizes         *SizeEstimator
}

var _ storage.Interface = (*Store)(nil)

// New returns the store described by cfg.
func New(cfg Config) (*Store, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("etcd3: Client is required")
	case cfg.Codec == nil:
		return nil, errors.New("etcd3: Codec is required")
	case cfg.NewFunc == nil || cfg.NewListFunc == nil:
		return nil, errors.New("etcd3: NewFunc and NewListFunc are required")
	}
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	keys, err := newKeyspace(cfg.Prefix, cfg.ResourcePrefix)
	if err != nil {
		return nil, fmt.Errorf("etcd3: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	transformer := cfg.Transformer
	if transformer == nil {
		transformer = value.Identity
	}
	sizes := cfg.Sizes
	if sizes == nil {
		sizes = &SizeEstimator{}
	}
	return &Store{
		sizes:         sizes,
		transformer:   transformer,
		client:        cfg.Client,
		codec:         cfg.Codec,
		newFunc:       cfg.NewFunc,
		newListFunc:   cfg.NewListFunc,
		keys:          keys,
		groupResource: cfg.GroupResource,
		leases:        newLeaseManager(cfg.Client, cfg.LeaseReuse),
		logger:        logger.With("resource", cfg.GroupResource.String()),
	}, nil
}

// Count returns how many objects are stored under key.
func (s *Store) Count(ctx context.Context, key string) (int64, error) {
	prefix, err := s.keys.etcdKey(key, true)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	resp, err := s.client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	s.record("count", began, err)
	if err != nil {
		return 0, etcdError("count", key, err)
	}
	return resp.Count, nil
}

// CurrentResourceVersion returns etcd's current revision: the header of a
// read of one key, which etcd answers after a quorum read.
func (s *Store) CurrentResourceVersion(ctx context.Context) (uint64, error) {
	rev, err := s.currentRevision(ctx)
	return uint64(rev), err
}

func (s *Store) currentRevision(ctx context.Context) (int64, error) {
	key, err := s.keys.etcdKey(s.keys.resourcePrefix, false)
	if err != nil {
		return 0, err
	}
	began := time.Now()
	resp, err := s.client.Get(ctx, key, clientv3.WithCountOnly())
	s.record("getCurrentResourceVersion", began, err)
	if err != nil {
		return 0, etcdError("get revision", key, err)
	}
	if resp.Header.Revision == 0 {
		return 0, errors.New("etcd returned revision 0")
	}
	return resp.Header.Revision, nil
}

// record reports one etcd call of the store in kube's etcd families.
func (s *Store) record(operation string, began time.Time, err error) {
	metrics.EtcdRequest(operation, s.groupResource.Group, s.groupResource.Resource, began, err)
}
