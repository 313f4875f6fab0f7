package app

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/trace"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apis/scheme"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/storage/embedded"
	"github.com/capstan-io/capstan/storage/etcd3"
	"github.com/capstan-io/capstan/storage/storagefactory"
	"github.com/capstan-io/capstan/tracing"
	"google.golang.org/grpc"
)

// startStorage reaches etcd (running the embedded one when no
// --etcd-servers are given), starts its compactor, loads the encryption
// configuration and makes the storage factory on them.
func (p *Process) startStorage(ctx context.Context) error {
	o := p.Options
	var err error
	if p.etcdClient, err = p.connectEtcd(ctx, o); err != nil {
		return err
	}
	metrics.SetStorageSize(etcdDBSize(p.etcdClient))
	if p.compactor, err = p.startCompactor(ctx, o.Etcd.CompactionInterval); err != nil {
		return err
	}
	if p.encryption, err = o.Etcd.Encryption.load(p.closing(ctx), p.Logger); err != nil {
		return err
	}
	p.Storage = &storagefactory.Factory{
		Client: p.etcdClient, Prefix: o.Etcd.Prefix, Scheme: scheme.Scheme, Codecs: scheme.Codecs, Logger: p.Logger,
		WatchCache: o.Etcd.WatchCache, Compactions: p.compactor, CountPollPeriod: o.Etcd.CountMetricPollPeriod,
		Deletion: o.Etcd.deletion(), CacheOff: p.cachesOff,
	}
	if p.Storage.Overrides, err = p.dialOverrides(ctx, o); err != nil {
		return err
	}
	if p.encryption != nil {
		p.Storage.Transformers = p.encryption
	}
	return nil
}

// startCompactor compacts etcd history older than five minutes, as
// kube-apiserver does; several servers on one etcd take turns.
func (p *Process) startCompactor(ctx context.Context, interval time.Duration) (*etcd3.Compactor, error) {
	compactor, err := etcd3.NewCompactor(etcd3.CompactorConfig{Client: p.etcdClient, Interval: interval, Logger: p.Logger})
	if err != nil || interval == 0 {
		// --etcd-compaction-interval=0: another party compacts etcd.
		return compactor, err
	}
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		compactor.Run(cctx)
	}()
	p.closers = append(p.closers, func() error { cancel(); <-done; return nil })
	return compactor, nil
}

// connectEtcd starts the embedded etcd, or connects to --etcd-servers.
func (p *Process) connectEtcd(ctx context.Context, o *Options) (*clientv3.Client, error) {
	if len(o.Etcd.Servers) == 0 {
		srv, err := embedded.Start(ctx, embedded.Config{
			Dir: filepath.Join(o.Capstan.DataDir, "etcd"), Logger: p.Logger, UnsafeNoFsync: o.Capstan.UnsafeNoFsync,
			WatchProgressNotifyInterval: 5 * time.Second, DialOptions: etcdDialOptions(p.tracerProvider()),
		})
		if err != nil {
			return nil, err
		}
		p.closers = append(p.closers, srv.Close)
		return srv.Client(), nil
	}
	client, err := dialEtcd(ctx, o.Etcd.Servers, o.Etcd.TLS, o.Generic.StorageInitializationTimeout, p.tracerProvider())
	if err != nil {
		return nil, fmt.Errorf("connecting to --etcd-servers: %w", err)
	}
	p.closers = append(p.closers, client.Close)
	return client, nil
}

// dialOverrides connects to the etcd servers of --etcd-servers-overrides,
// with the same client certificate as --etcd-servers.
func (p *Process) dialOverrides(ctx context.Context, o *Options) (map[schema.GroupResource]*clientv3.Client, error) {
	if len(p.overrides) == 0 {
		return nil, nil
	}
	out := map[schema.GroupResource]*clientv3.Client{}
	for _, ov := range p.overrides {
		client, err := dialEtcd(ctx, ov.Servers, o.Etcd.TLS, o.Generic.StorageInitializationTimeout, p.tracerProvider())
		if err != nil {
			return nil, fmt.Errorf("connecting to the --etcd-servers-overrides of %s: %w", ov.Resource, err)
		}
		p.closers = append(p.closers, client.Close)
		out[ov.Resource] = client
	}
	return out, nil
}

// etcdDialOptions are the etcd clients' gRPC options: spans of their
// calls when tp traces, and the grpc_client_ metric families.
func etcdDialOptions(tp trace.TracerProvider) []grpc.DialOption {
	return append(tracing.EtcdDialOptions(tp), metrics.GRPCClientDialOptions()...)
}

// dialEtcd connects to servers, with a client certificate and CA when
// they are given (etcd over mutual TLS, as kubeadm runs it), and client
// spans of its calls when tp traces. The embedded
// etcd, a single member, is its own leader and needs no RequireLeader.
func dialEtcd(ctx context.Context, servers []string, t EtcdTLSOptions, timeout time.Duration, tp trace.TracerProvider) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: servers, DialTimeout: cmp.Or(timeout, 20*time.Second), Context: context.WithoutCancel(ctx),
		DialOptions: etcdDialOptions(tp)}
	if t != (EtcdTLSOptions{}) {
		tlsConfig, err := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.CAFile}.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("etcd TLS (--etcd-cafile, --etcd-certfile, --etcd-keyfile): %w", err)
		}
		cfg.TLS = tlsConfig
	}
	client, err := clientv3.New(cfg)
	if err != nil {
		return nil, err
	}
	// A cluster may lose its quorum: calls then fail at once and
	// requests are told to come back, rather than hang.
	etcd3.RequireLeader(client)
	return client, nil
}
