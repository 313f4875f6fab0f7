package encryptionconfig

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/internal/kmstest"
)

// TestKubeWrittenValues decrypts values kube-apiserver v1.37.2 wrote
// (testdata/README.md) with the same configuration: the on-disk formats
// are kube's, the etcd key is the authenticated data, and the KMS v2
// EncryptedObject decodes.
func TestKubeWrittenValues(t *testing.T) {
	plugin, err := kmstest.Start(filepath.Join(t.TempDir(), "kms.sock"), "other-key")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plugin.Stop)
	if err := plugin.AddKey("fixture-key", []byte("kmskmskmskmskmskmskmskmskmskms12"), true); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile("testdata/interop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	cfg = bytes.ReplaceAll(cfg, []byte("unix:///tmp/enc-interop/kms.sock"), []byte(plugin.Endpoint))
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	set, err := NewSet(ctx, path, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ resource, name, prefix, plain string }{
		{"secrets", "s-kube", "k8s:enc:aescbc:v1:key1:", "kube-plain-secret-1"},
		{"configmaps", "cm-kube", "k8s:enc:secretbox:v1:key1:", "kube-plain-cm-1"},
		{"podtemplates", "pt-kube", "k8s:enc:aesgcm:v1:key1:", "kube-plain-pt-1"},
		{"limitranges", "lr-kube", "k8s:enc:kms:v2:testkms:", "kube-plain-lr-1"},
	} {
		b64, err := os.ReadFile("testdata/" + tc.resource + ".kube.b64")
		if err != nil {
			t.Fatal(err)
		}
		stored, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b64)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(stored, []byte(tc.prefix)) {
			t.Fatalf("%s: fixture starts with %q", tc.resource, stored[:30])
		}
		tr := set.For(schema.GroupResource{Resource: tc.resource})
		key := []byte("/registry/" + tc.resource + "/default/" + tc.name)
		plain, stale, err := tr.TransformFromStorage(ctx, stored, key)
		if err != nil {
			t.Fatalf("%s: %v", tc.resource, err)
		}
		if !bytes.HasPrefix(plain, []byte("k8s\x00")) || !bytes.Contains(plain, []byte(tc.plain)) {
			t.Fatalf("%s: decrypted to %q", tc.resource, plain)
		}
		// The KMS value's key ID is the plugin's current one: not stale.
		if stale {
			t.Errorf("%s: stale", tc.resource)
		}
		if tc.resource == "podtemplates" {
			if _, _, err := tr.TransformFromStorage(ctx, stored, []byte("/registry/podtemplates/default/other")); err == nil {
				t.Error("an AES-GCM value read under another key")
			}
		}
	}
}
