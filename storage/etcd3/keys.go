package etcd3

import (
	"fmt"
	"path"
	"strings"

	"github.com/capstan-io/capstan/storage"
)

// keyspace turns the keys the registry passes ("/configmaps/ns/a") into
// etcd keys ("/registry/configmaps/ns/a"), exactly as kube-apiserver does,
// so that both read and write the same etcd.
type keyspace struct {
	pathPrefix     string // the etcd prefix, always ending in "/"
	resourcePrefix string // every key starts with it: "/configmaps"
}

func newKeyspace(prefix, resourcePrefix string) (keyspace, error) {
	// path.Join cleans the prefix and makes it absolute, as kube does, so
	// "registry" and "/registry/" both mean "/registry/".
	p := path.Join("/", prefix)
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	if resourcePrefix == "" || resourcePrefix == "/" || !strings.HasPrefix(resourcePrefix, "/") {
		return keyspace{}, fmt.Errorf("resource prefix %q must start with / and name a resource", resourcePrefix)
	}
	if err := storage.ValidateKey(resourcePrefix); err != nil {
		return keyspace{}, fmt.Errorf("resource prefix: %w", err)
	}
	return keyspace{pathPrefix: p, resourcePrefix: strings.TrimSuffix(resourcePrefix, "/")}, nil
}

// etcdKey validates key (storage.PrepareKey) and returns the etcd key for
// it. A recursive key (a collection) gets a trailing "/" so that listing
// "/a" never returns "/ab/x".
func (k keyspace) etcdKey(key string, recursive bool) (string, error) {
	key, err := storage.PrepareKey(k.resourcePrefix, key, recursive)
	if err != nil {
		return "", err
	}
	return k.pathPrefix + key[1:], nil
}
