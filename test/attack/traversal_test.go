package attack

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestTraversalInNamesAndNamespaces: names and namespaces that are path
// steps (".", ".."), hold a '/' or encode one, never reach storage: etcd
// keys are built from them, and a key that climbs out of its resource's
// prefix would read or overwrite another resource (for secrets, another
// user's). No CVE of the API server stands for it; it is the class of
// kubectl cp's CVE-2019-11251, aimed at the server's keys.
func TestTraversalInNamesAndNamespaces(t *testing.T) {
	t.Parallel()
	s := start(t)
	cm := func(name string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"a":"b"}}`, name)
	}
	const cms = "/api/v1/namespaces/default/configmaps"
	for _, tc := range []struct {
		method, path string
		body         []byte
	}{
		{http.MethodPost, cms, cm("..")},
		{http.MethodPost, cms, cm(".")},
		{http.MethodPost, cms, cm("../secrets/x")},
		{http.MethodPost, cms, cm("a%2Fb")},
		{http.MethodPut, cms + "/..", cm("..")},
		{http.MethodPut, cms + "/%2E%2E", cm("..")},
		{http.MethodPut, cms + "/..%2Fsecrets", cm("../secrets")},
		{http.MethodPatch, cms + "/..%2F..%2Fsecrets%2Fdefault%2Fx?fieldManager=m", cm("../../secrets/default/x")},
		{http.MethodPost, "/api/v1/namespaces/../configmaps", cm("x")},
		{http.MethodPost, "/api/v1/namespaces/%2E%2E/configmaps", cm("y")},
		{http.MethodPost, "/api/v1/namespaces/a%2Fb/configmaps", cm("z")},
		{http.MethodPost, "/api/v1/namespaces", []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":".."}}`)},
	} {
		contentType := "application/json"
		if tc.method == http.MethodPatch {
			contentType = "application/apply-patch+yaml"
		}
		// NamespaceLifecycle looks the namespace up before validation, and
		// kube's lookup through client-go refuses the name ".." with a 500
		// (checked against kube-apiserver v1.37.2): refused all the same.
		internal := strings.HasPrefix(tc.path, "/api/v1/namespaces/../") || strings.HasPrefix(tc.path, "/api/v1/namespaces/%2E%2E/")
		a := s.do(t, tc.method, tc.path, contentType, tc.body)
		switch {
		case internal && a.code != http.StatusInternalServerError:
			t.Errorf("%s %s %s: %d %.300s, want kube's 500", tc.method, tc.path, tc.body, a.code, a.body)
		case !internal && (a.code < 400 || a.code >= 500):
			t.Errorf("%s %s %s: %d %.300s, want a 4xx", tc.method, tc.path, tc.body, a.code, a.body)
		}
	}
	keys, err := s.EtcdClient().Get(ctx(t), "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range keys.Kvs {
		k := string(kv.Key)
		if strings.Contains(k, "/../") || strings.Contains(k, "/./") || strings.HasSuffix(k, "/..") || strings.HasSuffix(k, "/.") || strings.Contains(k, "//") {
			t.Errorf("etcd key %q", k)
		}
	}
	s.ready(t)
}
