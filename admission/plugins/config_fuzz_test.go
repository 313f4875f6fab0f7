package plugins

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/capstan-io/capstan/admission/podsecurity"
	"github.com/capstan-io/capstan/admission/resourcequota"
	"github.com/capstan-io/capstan/admission/webhook"
)

// FuzzConfig: any --admission-control-config-file is refused with an
// error or gives each plugin a configuration that its own parser
// (PodSecurity, ResourceQuota, the webhooks' kubeconfig credentials)
// refuses or accepts, never a panic.
func FuzzConfig(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    apiVersion: pod-security.admission.config.k8s.io/v1\n    kind: PodSecurityConfiguration\n    defaults: {enforce: baseline, enforce-version: latest, warn: restricted}\n    exemptions: {usernames: [a], namespaces: [kube-system], runtimeClasses: [r]}\n",
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: ResourceQuotaConfiguration\n    limitedResources:\n    - {resource: pods, matchContains: [cpu], matchScopes: [{scopeName: PriorityClass, operator: In, values: [high]}]}\n",
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ValidatingAdmissionWebhook\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: /nonexistent/kubeconfig\n",
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- {name: PodSecurity, path: podsecurity.yaml}\n",
		"imagePolicy:\n  kubeConfigFile: /x\n  allowTTL: 50\n",
		"podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: a=b\n",
		`{"apiVersion":"apiserver.config.k8s.io/v1alpha1","kind":"AdmissionConfiguration","plugins":[{"name":"PodSecurity","configuration":{"apiVersion":"pod-security.admission.config.k8s.io/v1","kind":"PodSecurityConfiguration","defaults":{"enforce":"bogus"}}}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "admission.yaml")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := ReadConfig(path, []string{"PodSecurity", "ImagePolicyWebhook", "PodNodeSelector"})
		if err != nil {
			return
		}
		if cfg, err := c.For("PodSecurity"); err == nil {
			_, _ = podsecurity.New(cfg, nil, nil)
		}
		if cfg, err := c.For("ResourceQuota"); err == nil {
			_, _ = resourcequota.ParseConfiguration(cfg)
		}
		for _, name := range []string{"ValidatingAdmissionWebhook", "MutatingAdmissionWebhook"} {
			if cfg, err := c.For(name); err == nil {
				_, _ = webhook.LoadCredentials(cfg)
			}
		}
	})
}
