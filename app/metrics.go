package app

import (
	"context"
	"errors"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/capstan-io/capstan/metrics"
)

// serverMetrics records the version in kube's version families, has
// client-go's work queues and REST clients record in kube's families, and
// returns what /metrics shows.
func serverMetrics(o *Options) (metrics.Options, error) {
	metrics.SetVersion(versionInfo(o.Global.Version), "1.37", "1.36")
	metrics.RecordClientGo()
	return o.Metrics.options()
}

// etcdDBSize reads the size of the database of the etcd member client
// reaches first: apiserver_storage_size_bytes, as kube reports it.
func etcdDBSize(client *clientv3.Client) func(context.Context) (int64, error) {
	return func(ctx context.Context) (int64, error) {
		eps := client.Endpoints()
		if len(eps) == 0 {
			return 0, errors.New("etcd client has no endpoints")
		}
		st, err := client.Status(ctx, eps[0])
		if err != nil {
			return 0, err
		}
		return st.DbSize, nil
	}
}
