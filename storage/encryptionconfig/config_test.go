package encryptionconfig

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/storage/value"
)

const (
	key16 = "MDEyMzQ1Njc4OWFiY2RlZg=="
	key32 = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	head  = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"
)

func writeConfig(t *testing.T, path, body string) string {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "config.yaml")
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestValidation: kube's messages for configurations it refuses.
func TestValidation(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"no resources", head + "resources: []\n", "resources: Required value: at least one resources is required"},
		{"empty resource list", head + "resources:\n- resources: []\n  providers: [{identity: {}}]\n",
			"resources[0].resources: Required value: at least one resources[0].resources is required"},
		{"star", head + "resources:\n- resources: ['*']\n  providers: [{identity: {}}]\n",
			`resources[0].resources[0]: Invalid value: "*": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources`},
		{"capital", head + "resources:\n- resources: [Secrets]\n  providers: [{identity: {}}]\n",
			`resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters`},
		{"across groups", head + "resources:\n- resources: ['secrets.*']\n  providers: [{identity: {}}]\n",
			"encrypting the same resource across groups is not supported"},
		{"no REST", head + "resources:\n- resources: [serviceipallocations]\n  providers: [{identity: {}}]\n",
			"resources which do not have REST API/s cannot be encrypted"},
		{"extensions", head + "resources:\n- resources: [ingresses.extensions]\n  providers: [{identity: {}}]\n",
			"'extensions' group has been removed and cannot be used for encryption"},
		{"duplicate", head + "resources:\n- resources: [secrets, secrets]\n  providers: [{identity: {}}]\n",
			"the same resource cannot be specified multiple times"},
		{"overlap", head + "resources:\n- resources: [secrets, '*.']\n  providers: [{identity: {}}]\n",
			"using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"},
		{"two providers in one", head + "resources:\n- resources: [secrets]\n  providers: [{identity: {}, aescbc: {keys: [{name: k, secret: " + key32 + "}]}}]\n",
			"more than one provider specified in a single element, should split into different list elements"},
		{"empty provider", head + "resources:\n- resources: [secrets]\n  providers: [{}]\n",
			"provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"},
		{"no keys", head + "resources:\n- resources: [secrets]\n  providers: [{aesgcm: {keys: []}}]\n",
			"resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required"},
		{"no key name", head + "resources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: [{secret: " + key32 + "}]}}]\n",
			"resources[0].providers[0].aescbc.keys[0].name: Required value: name is a mandatory field for a key"},
		{"not base64", head + "resources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: [{name: k, secret: '%%%'}]}}]\n",
			`resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded`},
		{"secretbox 16", head + "resources:\n- resources: [secrets]\n  providers: [{secretbox: {keys: [{name: k, secret: " + key16 + "}]}}]\n",
			"secret is not of the expected length, got 16, expected one of [32]"},
		{"kms scheme", head + "resources:\n- resources: [secrets]\n  providers: [{kms: {apiVersion: v2, name: k, endpoint: 'tcp://x'}}]\n",
			`resources[0].providers[0].kms.endpoint: Invalid value: "tcp://x": unsupported scheme "tcp" for KMS provider, only unix is supported`},
		{"kms name colon", head + "resources:\n- resources: [secrets]\n  providers: [{kms: {apiVersion: v2, name: 'a:b', endpoint: 'unix:///x'}}]\n",
			"invalid KMS provider name a:b, must not contain ':'"},
		{"kms duplicate", head + "resources:\n- resources: [secrets]\n  providers: [{kms: {apiVersion: v2, name: k, endpoint: 'unix:///x'}}, {kms: {apiVersion: v2, name: k, endpoint: 'unix:///y'}}]\n",
			"duplicate KMS provider name k, names must be unique"},
		{"kms v2 cachesize", head + "resources:\n- resources: [secrets]\n  providers: [{kms: {apiVersion: v2, name: k, endpoint: 'unix:///x', cachesize: 5}}]\n",
			"cachesize is not supported in v2"},
		{"kms version", head + "resources:\n- resources: [secrets]\n  providers: [{kms: {apiVersion: v3, name: k, endpoint: 'unix:///x'}}]\n",
			"unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported"},
		{"kms timeout", head + "resources:\n- resources: [secrets]\n  providers: [{kms: {apiVersion: v2, name: k, endpoint: 'unix:///x', timeout: -1s}}]\n",
			"timeout should be a positive value"},
		{"masked by group", head + "resources:\n- resources: ['*.apps']\n  providers: [{identity: {}}]\n- resources: [deployments.apps]\n  providers: [{identity: {}}]\n",
			`resource "deployments.apps" is masked by earlier rule "*.apps"`},
		{"masked by all", head + "resources:\n- resources: ['*.*']\n  providers: [{identity: {}}]\n- resources: [secrets]\n  providers: [{identity: {}}]\n",
			`resource "secrets" is masked by earlier rule "*.*"`},
		{"wrong kind", "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n", "got unexpected config type"},
		{"empty file", "", "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(context.Background(), writeConfig(t, "", tc.body), false, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestLookup: a resource's own entry, then its group's "*.<group>", then
// "*.*", else identity.
func TestLookup(t *testing.T) {
	body := head + `resources:
- resources: [secrets]
  providers: [{aescbc: {keys: [{name: k1, secret: ` + key32 + `}]}}]
- resources: ['*.']
  providers: [{secretbox: {keys: [{name: k2, secret: ` + key32 + `}]}}]
- resources: ['*.apps']
  providers: [{aesgcm: {keys: [{name: k3, secret: ` + key32 + `}]}}]
- resources: ['*.*']
  providers: [{aesgcm: {keys: [{name: k4, secret: ` + key16 + `}]}}]
`
	c, err := Load(context.Background(), writeConfig(t, "", body), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gr     schema.GroupResource
		prefix string
	}{
		{schema.GroupResource{Resource: "secrets"}, "k8s:enc:aescbc:v1:k1:"},
		{schema.GroupResource{Resource: "configmaps"}, "k8s:enc:secretbox:v1:k2:"},
		{schema.GroupResource{Group: "apps", Resource: "deployments"}, "k8s:enc:aesgcm:v1:k3:"},
		{schema.GroupResource{Group: "batch", Resource: "jobs"}, "k8s:enc:aesgcm:v1:k4:"},
	} {
		out, err := c.For(tc.gr).TransformToStorage(context.Background(), []byte("v"), []byte("/registry/x"))
		if err != nil || !strings.HasPrefix(string(out), tc.prefix) {
			t.Errorf("%s: %q %v, want prefix %q", tc.gr, out, err, tc.prefix)
		}
	}
	unconfigured, err := Load(context.Background(), writeConfig(t, "", head+"resources:\n- resources: [secrets]\n  providers: [{identity: {}}]\n"), false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if unconfigured.For(schema.GroupResource{Resource: "configmaps"}) != value.Identity {
		t.Error("an unconfigured resource is not identity")
	}
}

// TestReload: a changed file is swapped in; an invalid one leaves the
// configuration in force.
func TestReload(t *testing.T) {
	cbc := head + "resources:\n- resources: [secrets]\n  providers: [{aescbc: {keys: [{name: k1, secret: " + key32 + "}]}}]\n"
	path := writeConfig(t, "", cbc)
	ctx := context.Background()
	s, err := NewSet(ctx, path, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := s.For(schema.GroupResource{Resource: "secrets"})
	prefix := func() string {
		out, err := tr.TransformToStorage(ctx, []byte("v"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if !s.HasHealthCheck() || s.Check(ctx) != nil {
		t.Error("with reload, kube has a passing kms-providers check")
	}
	if err := s.Reload(ctx); err != nil || !strings.HasPrefix(prefix(), "k8s:enc:aescbc:v1:k1:") {
		t.Fatalf("unchanged file: %v %s", err, prefix())
	}
	writeConfig(t, path, head+"resources: [{resources: [secrets], providers: [{secretbox: {keys: [{name: k2, secret: "+key32+"}]}}]}]\n")
	if err := s.Reload(ctx); err != nil || !strings.HasPrefix(prefix(), "k8s:enc:secretbox:v1:k2:") {
		t.Fatalf("changed file: %v %s", err, prefix())
	}
	writeConfig(t, path, head+"resources: [{resources: [secrets], providers: [{secretbox: {keys: [{name: k3, secret: "+key16+"}]}}]}]\n")
	if err := s.Reload(ctx); err == nil || !strings.Contains(err.Error(), "got 16, expected one of [32]") {
		t.Fatalf("invalid file: %v", err)
	}
	if !strings.HasPrefix(prefix(), "k8s:enc:secretbox:v1:k2:") {
		t.Fatalf("the invalid file replaced the configuration: %s", prefix())
	}
}
