package authzconfig

import (
	"strings"
	"testing"
	"time"

	apiserverv1 "k8s.io/apiserver/pkg/apis/apiserver/v1"
)

const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\n"

// TestLoad: kube's validation of an AuthorizationConfiguration, each
// refusal with the field and reason kube names.
func TestLoad(t *testing.T) {
	webhook := func(fields string) string {
		return header + "authorizers:\n- type: Webhook\n  name: w\n  webhook:\n" + fields
	}
	const goodWebhook = "    timeout: 3s\n    subjectAccessReviewVersion: v1\n    failurePolicy: Deny\n    connectionInfo: {type: InClusterConfig}\n"
	for _, tc := range []struct {
		name, file string
		want       string // "" when valid
	}{
		{"node and rbac", header + "authorizers: [{type: Node, name: node}, {type: RBAC, name: rbac}]\n", ""},
		{"v1beta1", strings.Replace(header, "/v1", "/v1beta1", 1) + "authorizers: [{type: RBAC, name: rbac}]\n", ""},
		{"a webhook", webhook(goodWebhook), ""},
		{"two webhooks", header + "authorizers:\n- {type: Webhook, name: a, webhook: {timeout: 3s, subjectAccessReviewVersion: v1, failurePolicy: Deny, connectionInfo: {type: InClusterConfig}}}\n" +
			"- {type: Webhook, name: b, webhook: {timeout: 3s, subjectAccessReviewVersion: v1, failurePolicy: NoOpinion, connectionInfo: {type: InClusterConfig}}}\n", ""},
		{"wrong kind", "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\n", `no kind "AuthenticationConfiguration" is registered`},
		{"unknown field", header + "authorizers: [{type: RBAC, name: rbac, extra: 1}]\n", `unknown field "authorizers[0].extra"`},
		{"none", header + "authorizers: []\n", "authorizers: Required value: at least one authorization mode must be defined"},
		{"unknown type", header + "authorizers: [{type: Magic, name: magic}]\n", `authorizers[0].type: Unsupported value: "Magic"`},
		{"no type", header + "authorizers: [{name: x}]\n", "authorizers[0].type: Required value"},
		{"twice", header + "authorizers: [{type: RBAC, name: rbac}, {type: RBAC, name: rbac2}]\n", `authorizers[1].type: Duplicate value: "RBAC"`},
		{"same name", header + "authorizers: [{type: RBAC, name: x}, {type: Node, name: x}]\n", `authorizers[1].name: Duplicate value: "x"`},
		{"no name", header + "authorizers: [{type: RBAC}]\n", "authorizers[0].name: Required value"},
		{"built-in name", header + "authorizers: [{type: RBAC, name: mine}]\n", "expected name rbac for authorizer RBAC instead of mine"},
		{"webhook section on RBAC", header + "authorizers: [{type: RBAC, name: rbac, webhook: {}}]\n",
			`authorizers[0].webhook: Invalid value: "non-null": may only be specified when type=Webhook`},
		{"webhook without section", header + "authorizers: [{type: Webhook, name: w}]\n", "authorizers[0].webhook: Required value: required when type=Webhook"},
		{"timeout", webhook(strings.Replace(goodWebhook, "3s", "31s", 1)), `authorizers[0].timeout: Invalid value: "31s": must be > 0s and <= 30s`},
		{"no timeout", webhook(strings.Replace(goodWebhook, "timeout: 3s", "authorizedTTL: 1s", 1)), "authorizers[0].timeout: Required value"},
		{"negative ttl", webhook(goodWebhook + "    unauthorizedTTL: -1s\n"), `authorizers[0].unauthorizedTTL: Invalid value: "-1s": must be > 0s`},
		{"review version", webhook(strings.Replace(goodWebhook, "Version: v1", "Version: v2", 1)), `authorizers[0].subjectAccessReviewVersion: Unsupported value: "v2"`},
		{"failure policy", webhook(strings.Replace(goodWebhook, "Deny", "Allow", 1)), `authorizers[0].failurePolicy: Unsupported value: "Allow"`},
		{"conditions need a version", webhook(goodWebhook + "    matchConditions: [{expression: 'true'}]\n"),
			"authorizers[0].matchConditionSubjectAccessReviewVersion: Required value: required if match conditions are specified"},
		{"a bad condition", webhook(goodWebhook + "    matchConditionSubjectAccessReviewVersion: v1\n    matchConditions: [{expression: '1'}]\n"),
			"authorizers[0].matchConditions: Invalid value: 1"},
		{"relative kubeconfig", webhook(strings.Replace(goodWebhook, "{type: InClusterConfig}", "{type: KubeConfigFile, kubeConfigFile: rel}", 1)),
			`authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "rel": must be an absolute path`},
		{"missing kubeconfig", webhook(strings.Replace(goodWebhook, "{type: InClusterConfig}", "{type: KubeConfigFile, kubeConfigFile: /nonexistent}", 1)),
			`authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "/nonexistent": error loading file`},
		{"kubeconfig with in-cluster", webhook(strings.Replace(goodWebhook, "{type: InClusterConfig}", "{type: InClusterConfig, kubeConfigFile: /x}", 1)),
			`authorizers[0].connectionInfo.kubeConfigFile: Invalid value: "/x": can only be set when type=KubeConfigFile`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load([]byte(tc.file))
			if tc.want == "" {
				if err != nil || len(c.Authorizers) == 0 {
					t.Fatalf("Load = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Load = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestFromLegacy: the flags' configuration is kube's, and valid.
func TestFromLegacy(t *testing.T) {
	c := FromLegacy(Legacy{Modes: []string{"Node", "RBAC", "Webhook"}, WebhookConfigFile: "/etc/webhook.yaml", WebhookVersion: "v1",
		WebhookAuthorizedTTL: 5 * time.Minute})
	if len(c.Authorizers) != 3 || c.Authorizers[0].Name != "node" || c.Authorizers[1].Name != "rbac" {
		t.Fatalf("authorizers %+v", c.Authorizers)
	}
	w := c.Authorizers[2].Webhook
	if c.Authorizers[2].Name != "webhook" || w.Timeout.Duration != 30*time.Second || w.FailurePolicy != apiserverv1.FailurePolicyNoOpinion ||
		!*w.CacheAuthorizedRequests || *w.CacheUnauthorizedRequests || *w.ConnectionInfo.KubeConfigFile != "/etc/webhook.yaml" {
		t.Errorf("webhook %+v", w)
	}
	c.Authorizers = c.Authorizers[:2]
	if err := Validate(c); err != nil {
		t.Errorf("Node,RBAC: %v", err)
	}
}
