package attack

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestJSONPatchAmplification (CVE-2019-1002100): a JSON patch whose copy
// operations copy an object into itself doubles it with each operation;
// kube stops the copies at 3 MiB with a 422 and refuses more than 10,000
// operations with a 413. kube's 422 for a failed JSON patch keeps the cause
// to itself (test/parity records it), so the generic message is what tells
// the copy limit (the patch fails while applied) from the ConfigMap's size
// validation (which would name the field).
func TestJSONPatchAmplification(t *testing.T) {
	t.Parallel()
	s := start(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "seed"}, Data: map[string]string{"a": strings.Repeat("x", 8<<10)}}
	if _, err := s.client.CoreV1().ConfigMaps("default").Create(ctx(t), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const path = "/api/v1/namespaces/default/configmaps/seed"
	// Each copy of /data into a new key of itself doubles it: 12 doublings
	// of 8 KiB would be 32 MiB (more would only take longer to fail
	// without the limit).
	var ops []string
	for i := range 12 {
		ops = append(ops, fmt.Sprintf(`{"op":"copy","from":"/data","path":"/data/x%d"}`, i))
	}
	doubling := "[" + strings.Join(ops, ",") + "]"
	a := s.do(t, http.MethodPatch, path, "application/json-patch+json", []byte(doubling))
	if st := a.status(t); a.code != http.StatusUnprocessableEntity || st.Reason != metav1.StatusReasonInvalid ||
		st.Message != "the server rejected our request due to an error in our request" {
		t.Errorf("doubling copies: %d %.300s", a.code, a.body)
	}

	many := "[" + strings.TrimSuffix(strings.Repeat(`{"op":"test","path":"/metadata/name","value":"seed"},`, 10001), ",") + "]"
	a = s.do(t, http.MethodPatch, path, "application/json-patch+json", []byte(many))
	want := fmt.Sprintf("Request entity too large: The allowed maximum operations in a JSON patch is %d, got %d", 10000, 10001)
	if st := a.status(t); a.code != http.StatusRequestEntityTooLarge || st.Message != want {
		t.Errorf("10,001 operations: %d %.300s", a.code, a.body)
	}
	got, err := s.client.CoreV1().ConfigMaps("default").Get(ctx(t), "seed", metav1.GetOptions{})
	if err != nil || len(got.Data) != 1 {
		t.Errorf("after the patches: %v %v", len(got.Data), err)
	}
	s.ready(t)
}
