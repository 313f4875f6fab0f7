package app

import (
	"net/http"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/authn"
	"github.com/capstan-io/capstan/server"
)

// etcdCheck is the etcd health check: a read that etcd must answer.
func etcdCheck(client *clientv3.Client) server.HealthCheck {
	return server.HealthCheck{Name: "etcd", Check: func(r *http.Request) error {
		_, err := client.Get(r.Context(), "health", clientv3.WithCountOnly())
		return err
	}}
}

// publicPaths are the paths anonymous users may read, as kube's
// system:public-info-viewer role allows.
var publicPaths = sets.New("/healthz", "/livez", "/readyz", "/version")

// publicPathsOnly limits anonymous authentication to the public paths (and
// their named checks): elsewhere a request without credentials gets 401.
func publicPathsOnly(a authn.Authenticator) authn.Authenticator {
	return authn.AuthenticatorFunc(func(r *http.Request) (*authn.Response, bool, error) {
		first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !publicPaths.Has("/" + first) {
			return nil, false, nil
		}
		return a.AuthenticateRequest(r)
	})
}
