package crd

import (
	"github.com/capstan-io/capstan/test/e2e/e2eutil"

	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// TestCRDClientset: the apiextensions clientset, configured for JSON and
// for protobuf as kube's own components are, through every verb: the
// answers come in the asked encoding, and the CRD is stored as kube stores
// it (protobuf in the "k8s\x00" envelope, at v1), whatever the client sent.
func TestCRDClientset(t *testing.T) {
	e := e2eutil.Start(t)
	for _, tc := range []struct{ name, contentType, plural string }{
		{"JSON", "application/json", "jsonwidgets"},
		{"protobuf", e2eutil.ProtobufType, "protowidgets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, seen := e.CRDClient(t, tc.contentType)
			crds := c.ApiextensionsV1().CustomResourceDefinitions()
			created, err := crds.Create(e2eutil.Ctx(t), e2eutil.WidgetCRD(tc.plural), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.Spec.Names.Singular != strings.TrimSuffix(tc.plural, "s") || created.Spec.Conversion == nil ||
				string(created.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["size"].Default.Raw) != "1" {
				t.Fatalf("created = %+v", created.Spec)
			}
			w, err := crds.Watch(e2eutil.Ctx(t), metav1.ListOptions{ResourceVersion: created.ResourceVersion,
				FieldSelector: "metadata.name=" + created.Name})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			var established *apiextv1.CustomResourceDefinition
			e2eutil.Eventually(t, 10*time.Second, "established", func(c2 context.Context) (bool, error) {
				got, err := crds.Get(c2, created.Name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				established = got
				return e2eutil.HasCRDCondition(got, apiextv1.Established), nil
			})
			wantWatchEvent(t, w, watch.Modified, func(crd *apiextv1.CustomResourceDefinition) bool {
				return e2eutil.HasCRDCondition(crd, apiextv1.Established)
			})
			e.WantKubeStoredCRD(t, created.Name)

			list, err := crds.List(e2eutil.Ctx(t), metav1.ListOptions{LabelSelector: "test=proto"})
			if err != nil || !e2eutil.ContainsCRD(list, created.Name) {
				t.Fatalf("list = %v, %v", list, err)
			}
			established.Spec.Versions[0].AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{
				{Name: "Size", Type: "integer", JSONPath: ".spec.size"}}
			updated, err := crds.Update(e2eutil.Ctx(t), established, metav1.UpdateOptions{})
			if err != nil || len(updated.Spec.Versions[0].AdditionalPrinterColumns) != 1 {
				t.Fatalf("update = %v, %v", updated, err)
			}
			wantWatchEvent(t, w, watch.Modified, func(crd *apiextv1.CustomResourceDefinition) bool {
				return len(crd.Spec.Versions[0].AdditionalPrinterColumns) == 1
			})
			updated.Status.AcceptedNames.Plural = "Not_A_Label"
			if _, err := crds.UpdateStatus(e2eutil.Ctx(t), updated, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
				t.Fatalf("status update with an invalid accepted plural: %v, want Invalid", err)
			}
			e.PatchCRD(t, crds, created.Name)
			e.CrdViews(t, tc.contentType, created.Name)

			if err := crds.Delete(e2eutil.Ctx(t), created.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			wantWatchEvent(t, w, watch.Deleted, func(*apiextv1.CustomResourceDefinition) bool { return true })
			if _, err := crds.Get(e2eutil.Ctx(t), created.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("get after delete: %v", err)
			}
			wantSeen(t, seen, tc.contentType)
		})
	}
	t.Run("deletecollection", func(t *testing.T) {
		c, _ := e.CRDClient(t, e2eutil.ProtobufType)
		crds := c.ApiextensionsV1().CustomResourceDefinitions()
		for _, p := range []string{"gonewidgets", "lostwidgets"} {
			if _, err := crds.Create(e2eutil.Ctx(t), e2eutil.WidgetCRD(p), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := crds.DeleteCollection(e2eutil.Ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "test=proto"}); err != nil {
			t.Fatalf("deletecollection: %v", err)
		}
		e2eutil.Eventually(t, 30*time.Second, "CRDs gone", func(c2 context.Context) (bool, error) {
			list, err := crds.List(c2, metav1.ListOptions{LabelSelector: "test=proto"})
			return err == nil && len(list.Items) == 0, err
		})
	})
}

// decodeEnvelope reads kube's storage envelope: "k8s\x00", then a
// runtime.Unknown.
func decodeEnvelope(t *testing.T, raw []byte) runtime.Unknown {
	t.Helper()
	var u runtime.Unknown
	if err := u.Unmarshal(bytes.TrimPrefix(raw, []byte("k8s\x00"))); err != nil {
		t.Fatalf("stored value is not a runtime.Unknown: %v", err)
	}
	return u
}

// wantWatchEvent reads events until one of type typ whose CRD passes ok.
func wantWatchEvent(t *testing.T, w watch.Interface, typ watch.EventType, ok func(*apiextv1.CustomResourceDefinition) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, open := <-w.ResultChan():
			if !open {
				t.Fatalf("watch closed before a %s event", typ)
			}
			crd, isCRD := ev.Object.(*apiextv1.CustomResourceDefinition)
			if !isCRD {
				t.Fatalf("watch event %s of %T: %v", ev.Type, ev.Object, ev.Object)
			}
			if ev.Type == typ && ok(crd) {
				return
			}
		case <-deadline:
			t.Fatalf("no %s watch event within 30s", typ)
		}
	}
}

// wantSeen checks that every answer came in contentType.
func wantSeen(t *testing.T, seen *e2eutil.ContentTypes, contentType string) {
	t.Helper()
	got := seen.List()
	if len(got) == 0 {
		t.Fatal("no answers recorded")
	}
	for _, ct := range got {
		if !strings.HasPrefix(ct, contentType) {
			t.Errorf("an answer came as %q, want %s: %v", ct, contentType, got)
			return
		}
	}
}

// TestCRDStoredAsV1: CRDs that earlier capstans stored at v1, as JSON and
// as protobuf, are read (get, list, served) without being rewritten, and
// their next write stores them as kube does.
func TestCRDStoredAsV1(t *testing.T) {
	e := e2eutil.Start(t)
	for _, format := range []string{"JSON", "protobuf"} {
		t.Run(format, func(t *testing.T) { e.StoredAsV1(t, format) })
	}
}
