package app

import (
	"net/http"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/capstan-io/capstan/server"
)

// etcdCheck is the etcd health check: a read that etcd must answer.
func etcdCheck(client *clientv3.Client) server.HealthCheck {
	return server.HealthCheck{Name: "etcd", Check: func(r *http.Request) error {
		_, err := client.Get(r.Context(), "health", clientv3.WithCountOnly())
		return err
	}}
}
