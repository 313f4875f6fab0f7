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
	if err := validateKey(resourcePrefix); err != nil {
		return keyspace{}, fmt.Errorf("resource prefix: %w", err)
	}
	return keyspace{pathPrefix: p, resourcePrefix: strings.TrimSuffix(resourcePrefix, "/")}, nil
}

// etcdKey validates key and returns the etcd key for it. A recursive key
// (a collection) gets a trailing "/" so that listing "/a" never returns
// "/ab/x".
func (k keyspace) etcdKey(key string, recursive bool) (string, error) {
	if err := validateKey(key); err != nil {
		return "", err
	}
	if key != k.resourcePrefix && !strings.HasPrefix(key, k.resourcePrefix+"/") {
		return "", storage.NewError(storage.ErrInvalidKey, key, 0, fmt.Sprintf("outside the resource prefix %q", k.resourcePrefix))
	}
	if recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	return k.pathPrefix + key[1:], nil
}

// validateKey refuses any key that could name something else than what it
// spells once appended to the etcd prefix: relative keys, empty or "."/".."
// segments, and NUL bytes (which sort keys around a range boundary).
func validateKey(key string) error {
	invalid := func(why string) error { return storage.NewError(storage.ErrInvalidKey, key, 0, why) }
	switch {
	case key == "" || key == "/":
		return invalid("empty key")
	case !strings.HasPrefix(key, "/"):
		return invalid("key must start with /")
	case strings.ContainsRune(key, 0):
		return invalid("key contains a NUL byte")
	}
	// The last segment may be empty: "/configmaps/ns/" names a collection.
	segments := strings.Split(strings.TrimSuffix(key[1:], "/"), "/")
	for _, s := range segments {
		switch s {
		case "":
			return invalid("empty path segment")
		case ".", "..":
			return invalid("relative path segment")
		}
	}
	return nil
}
