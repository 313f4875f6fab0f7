package attack

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// yamlBomb is a "billion laughs" ConfigMap: nine levels of nine aliases,
// 9^9 strings once expanded, in under a kilobyte.
func yamlBomb(name string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\nbomb:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n", name)
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "  l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	return []byte(b.String())
}

// TestYAMLAndJSONBombs (CVE-2019-11253): bodies that are small on the wire
// and huge or deep once decoded (YAML aliases, deeply nested JSON) and
// bodies over the size limit are refused with kube's 4xx Status, nothing
// is created, and the server stays up.
func TestYAMLAndJSONBombs(t *testing.T) {
	t.Parallel()
	s := start(t)
	const cms = "/api/v1/namespaces/default/configmaps"
	deep := 100000
	deepJSON := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":` +
		strings.Repeat("[", deep) + strings.Repeat("]", deep) + "}")
	big := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big"},"data":{"a":"` + strings.Repeat("x", 4<<20) + `"}}`)
	for _, tc := range []struct {
		name, method, path, contentType string
		body                            []byte
		code                            int
	}{
		{"YAML aliases on create", http.MethodPost, cms, "application/yaml", yamlBomb("bomb"), http.StatusBadRequest},
		{"YAML aliases in an apply", http.MethodPatch, cms + "/bomb?fieldManager=m", "application/apply-patch+yaml", yamlBomb("bomb"), http.StatusBadRequest},
		{"nested JSON on create", http.MethodPost, cms, "application/json", deepJSON, http.StatusBadRequest},
		{"body over 3 MiB", http.MethodPost, cms, "application/json", big, http.StatusRequestEntityTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := s.do(t, tc.method, tc.path, tc.contentType, tc.body)
			if st := a.status(t); a.code != tc.code || int(st.Code) != tc.code {
				t.Errorf("%d %s, want %d", a.code, a.body, tc.code)
			}
		})
	}
	for _, name := range []string{"bomb", "deep", "big"} {
		if _, err := s.client.CoreV1().ConfigMaps("default").Get(ctx(t), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("config map %s: %v, want not found", name, err)
		}
	}
	s.ready(t)
}
