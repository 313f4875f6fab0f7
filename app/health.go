package app

import (
	"context"
	"net/http"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/capstan-io/capstan/server"
)

// etcdCheck is the etcd health checks, kube's: a read that etcd must
// answer within --etcd-healthcheck-timeout (every endpoint) and, for
// /readyz, within --etcd-readycheck-timeout.
func etcdCheck(client *clientv3.Client, o EtcdOptions) []server.HealthCheck {
	check := func(timeout time.Duration) func(*http.Request) error {
		return func(r *http.Request) error {
			ctx, cancel := context.WithTimeout(r.Context(), timeout)
			defer cancel()
			_, err := client.Get(ctx, "health", clientv3.WithCountOnly())
			return err
		}
	}
	return []server.HealthCheck{
		{Name: "etcd", Check: check(o.HealthcheckTimeout)},
		{Name: "etcd-readiness", Check: check(o.ReadycheckTimeout), ReadyzOnly: true},
	}
}
