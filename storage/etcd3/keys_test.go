package etcd3

import (
	"errors"
	"testing"

	"github.com/capstan-io/capstan/storage"
)

func TestEtcdKey(t *testing.T) {
	ks, err := newKeyspace("/registry", "/configmaps")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key       string
		recursive bool
		want      string // "" means refused
	}{
		{"/configmaps/ns/a", false, "/registry/configmaps/ns/a"},
		{"/configmaps/ns/a", true, "/registry/configmaps/ns/a/"},
		{"/configmaps/ns/", true, "/registry/configmaps/ns/"},
		{"/configmaps", true, "/registry/configmaps/"},
		{"/configmaps", false, "/registry/configmaps"},
		{"/configmaps/a.b/c..d", false, "/registry/configmaps/a.b/c..d"},
		{"/configmaps/ns/...", false, "/registry/configmaps/ns/..."},
		{"", false, ""},
		{"/", true, ""},
		{"configmaps/ns/a", false, ""},
		{"/configmapsx/ns/a", false, ""},
		{"/secrets/ns/a", false, ""},
		{"/configmaps/../secrets/a", false, ""},
		{"/configmaps/ns/..", true, ""},
		{"/configmaps/./a", false, ""},
		{"/configmaps/ns/.", false, ""},
		{"/configmaps//a", false, ""},
		{"/configmaps/ns//", true, ""},
		{"/configmaps/ns/a\x00", false, ""},
	} {
		got, err := ks.etcdKey(tc.key, tc.recursive)
		if tc.want == "" {
			if !errors.Is(err, storage.ErrInvalidKey) {
				t.Errorf("etcdKey(%q, %v) = %q, %v; want ErrInvalidKey", tc.key, tc.recursive, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("etcdKey(%q, %v) = %q, %v; want %q", tc.key, tc.recursive, got, err, tc.want)
		}
	}
}

func TestNewKeyspace(t *testing.T) {
	for _, tc := range []struct {
		prefix, resourcePrefix string
		wantPath               string // "" means refused
	}{
		{"/registry", "/configmaps", "/registry/"},
		{"registry", "/configmaps", "/registry/"},
		{"/registry/", "/apps/deployments", "/registry/"},
		{"/", "/configmaps", "/"},
		{"/a/../b", "/configmaps", "/b/"},
		{"/registry", "", ""},
		{"/registry", "/", ""},
		{"/registry", "configmaps", ""},
		{"/registry", "/config/../secrets", ""},
	} {
		ks, err := newKeyspace(tc.prefix, tc.resourcePrefix)
		switch {
		case tc.wantPath == "" && err == nil:
			t.Errorf("newKeyspace(%q, %q) accepted", tc.prefix, tc.resourcePrefix)
		case tc.wantPath != "" && (err != nil || ks.pathPrefix != tc.wantPath):
			t.Errorf("newKeyspace(%q, %q) = %q, %v; want %q", tc.prefix, tc.resourcePrefix, ks.pathPrefix, err, tc.wantPath)
		}
	}
}
