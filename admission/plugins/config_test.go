package plugins

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadConfig(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "quota.yaml", "apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\n")
	for _, tc := range []struct {
		name, file string
		plugin     string
		want       string // the plugin's configuration; "" none
		wantErr    string
	}{
		{name: "v1 inline", plugin: "EventRateLimit", want: `{"kind":"Configuration","limits":[{"qps":1,"type":"Server"}]}`,
			file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    kind: Configuration\n    limits:\n    - type: Server\n      qps: 1\n"},
		{name: "apiserver.k8s.io/v1alpha1 by relative path", plugin: "ResourceQuota", want: "apiVersion: apiserver.config.k8s.io/v1\nkind: ResourceQuotaConfiguration\n",
			file: "apiVersion: apiserver.k8s.io/v1alpha1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  path: quota.yaml\n"},
		{name: "another plugin's", plugin: "PodSecurity",
			file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  path: quota.yaml\n"},
		{name: "legacy pod node selector file", plugin: "PodNodeSelector", want: "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: a=b\n",
			file: "podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: a=b\n"},
		{name: "unknown field", wantErr: `strict decoding error: unknown field "plugin"`,
			file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugin: []\n"},
		{name: "not a configuration", wantErr: "Object 'Kind' is missing", file: "foo: bar\n"},
		{name: "missing path", plugin: "ResourceQuota", wantErr: "couldn't open admission plugin configuration",
			file: "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  path: missing.yaml\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, "admission.yaml", tc.file)
			c, err := ReadConfig(path, []string{"PodNodeSelector", "ResourceQuota"})
			var got []byte
			if err == nil {
				got, err = c.For(tc.plugin)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("configuration %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := ReadConfig(filepath.Join(dir, "none.yaml"), nil); err == nil || !strings.Contains(err.Error(), "unable to read admission control configuration from") {
		t.Errorf("missing file: %v", err)
	}
}

func configFor(name, raw string) apiserver.AdmissionPluginConfiguration {
	return apiserver.AdmissionPluginConfiguration{Name: name, Configuration: &runtime.Unknown{Raw: []byte(raw)}}
}
