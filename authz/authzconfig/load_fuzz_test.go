package authzconfig

import "testing"

// FuzzLoad: any AuthorizationConfiguration file
// (--authorization-config) decodes and validates, or is refused with an
// error, never a panic.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- {type: Node, name: node}\n- {type: RBAC, name: rbac}\n",
		"apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: Webhook\n  name: w\n  webhook:\n    timeout: 3s\n    authorizedTTL: 5m\n    unauthorizedTTL: 30s\n    subjectAccessReviewVersion: v1\n    matchConditionSubjectAccessReviewVersion: v1\n    failurePolicy: Deny\n    connectionInfo: {type: InClusterConfig}\n    matchConditions:\n    - expression: \"has(request.resourceAttributes) && request.resourceAttributes.namespace == 'kube-system'\"\n",
		`{"apiVersion":"apiserver.config.k8s.io/v1","kind":"AuthorizationConfiguration","authorizers":[{"type":"Webhook","name":"w","webhook":{"timeout":"40s","connectionInfo":{"type":"KubeConfigFile","kubeConfigFile":"rel"},"matchConditions":[{"expression":"1"}]}}]}`,
		"apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers: [{type: RBAC, name: a}, {type: RBAC, name: a}]\n",
		"kind: AuthorizationConfiguration\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Load(data)
		if err != nil {
			return
		}
		if err := Validate(c); err != nil {
			return
		}
		if len(c.Authorizers) == 0 {
			t.Fatalf("%q: a valid configuration without authorizers", data)
		}
	})
}
