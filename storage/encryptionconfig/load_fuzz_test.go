package encryptionconfig

import (
	"bytes"
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FuzzConfig: any EncryptionConfiguration file
// (--encryption-provider-config) is refused with an error, or, when it
// needs no KMS plugin, builds transformers that give back what they were
// given.
func FuzzConfig(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aescbc: {keys: [{name: k1, secret: c2VjcmV0IGlzIHNlY3VyZSwgaXMgaXQgbm90IHNvPyE=}]}\n  - identity: {}\n",
		"apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: ['*.*']\n  providers:\n  - secretbox: {keys: [{name: k, secret: YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=}]}\n",
		"apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [configmaps, '*.apps']\n  providers:\n  - aesgcm: {keys: [{name: a, secret: MTIzNDU2Nzg5MDEyMzQ1Ng==}, {name: b, secret: MTIzNDU2Nzg5MDEyMzQ1Ng==}]}\n",
		"apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - kms: {apiVersion: v2, name: k, endpoint: 'unix:///nonexistent.sock'}\n",
		"apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: ['*.*', secrets, events]\n  providers: [{identity: {}}]\n",
		"kind: EncryptionConfiguration\nresources: [{providers: []}]\n",
	} {
		f.Add([]byte(seed))
	}
	secrets := schema.GroupResource{Resource: "secrets"}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := decode("fuzz.yaml", data)
		if err != nil || len(validate(cfg, false)) > 0 {
			return
		}
		for _, r := range cfg.Resources {
			for _, p := range r.Providers {
				if p.KMS != nil {
					return // a plugin process is not the file's to test
				}
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		c, err := build(ctx, cfg, false, nil)
		if err != nil {
			return
		}
		tr := c.For(secrets)
		plain, ad := []byte("the secret"), []byte("/registry/secrets/ns/name")
		stored, err := tr.TransformToStorage(ctx, plain, ad)
		if err != nil {
			t.Fatalf("%q: write: %v", data, err)
		}
		back, _, err := tr.TransformFromStorage(ctx, stored, ad)
		if err != nil || !bytes.Equal(back, plain) {
			t.Fatalf("%q: read back %q, %v", data, back, err)
		}
	})
}
