package e2e

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// inconsistentContinue is kube's message for a continue token whose
// revision is compacted.
const inconsistentContinue = "The provided continue parameter is too old to display a consistent list result. " +
	"You can start a new list without the continue parameter, or use the continue token in this response to " +
	"retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - " +
	"objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

func TestPagingSnapshot(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	var want []string
	for i := range 10 {
		name := fmt.Sprintf("cm-%02d", i)
		e.ConfigMap(t, ns, name, map[string]string{"even": fmt.Sprint(i%2 == 0)})
		want = append(want, name)
	}
	first, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 3})
	if err != nil || names(first.Items) != "cm-00,cm-01,cm-02" || first.Continue == "" {
		t.Fatalf("first page = %s continue %q, %v", names(first.Items), first.Continue, err)
	}
	if first.RemainingItemCount == nil || *first.RemainingItemCount != 7 {
		t.Fatalf("remainingItemCount = %v, want 7", first.RemainingItemCount)
	}
	// Writes after the first page do not show in the next ones.
	e.ConfigMap(t, ns, "cm-99", nil)
	if err := cms.Delete(e2eutil.Ctx(t), "cm-09", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	changed, _ := cms.Get(e2eutil.Ctx(t), "cm-05", metav1.GetOptions{})
	changed.Data["k"] = "changed"
	if _, err := cms.Update(e2eutil.Ctx(t), changed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := append([]corev1.ConfigMap(nil), first.Items...)
	for token := first.Continue; token != ""; {
		page, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 3, Continue: token})
		if err != nil {
			t.Fatal(err)
		}
		if page.ResourceVersion != first.ResourceVersion {
			t.Fatalf("page resourceVersion = %s, want the first page's %s", page.ResourceVersion, first.ResourceVersion)
		}
		if page.Continue == "" && page.RemainingItemCount != nil {
			t.Fatalf("last page has remainingItemCount %d", *page.RemainingItemCount)
		}
		got, token = append(got, page.Items...), page.Continue
	}
	if names(got) != strings.Join(want, ",") || got[5].Data["k"] != "v" {
		t.Fatalf("pages = %s (cm-05 data %v), want the snapshot %v", names(got), got[5].Data, want)
	}

	// A filtered page cannot tell how many items remain.
	even, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 2, LabelSelector: "even=true"})
	if err != nil || names(even.Items) != "cm-00,cm-02" || even.Continue == "" || even.RemainingItemCount != nil {
		t.Fatalf("filtered page = %s continue %q remaining %v, %v", names(even.Items), even.Continue, even.RemainingItemCount, err)
	}
	_, err = cms.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 2, Continue: "not-a-token"})
	s := e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "")
	if !strings.HasPrefix(s.Message, "invalid continue token") {
		t.Fatalf("message = %q", s.Message)
	}
}

func TestPagingExpiredContinue(t *testing.T) {
	e := e2eutil.Start(t)
	ns := e.Namespace(t)
	cms := e.Clientset.CoreV1().ConfigMaps(ns)
	for i := range 5 {
		e.ConfigMap(t, ns, fmt.Sprintf("cm-%d", i), nil)
	}
	first, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 2})
	if err != nil || first.Continue == "" {
		t.Fatalf("first page: %v", err)
	}
	e.ConfigMap(t, ns, "cm-9", nil)
	e.CompactEtcd(t)
	s := expiredSoon(t, func() error {
		_, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 2, Continue: first.Continue})
		return err
	})
	e2eutil.WantStatus(t, &apierrors.StatusError{ErrStatus: *s}, 410, metav1.StatusReasonExpired, inconsistentContinue)
	if s.Continue == "" {
		t.Fatal("410 Status has no continue token to go on with")
	}
	var rest []corev1.ConfigMap
	for token := s.Continue; token != ""; {
		page, err := cms.List(e2eutil.Ctx(t), metav1.ListOptions{Limit: 2, Continue: token})
		if err != nil {
			t.Fatalf("continuing with the inconsistent token: %v", err)
		}
		rest, token = append(rest, page.Items...), page.Continue
	}
	if names(rest) != "cm-2,cm-3,cm-4,cm-9" {
		t.Fatalf("rest of the list = %s", names(rest))
	}
}
