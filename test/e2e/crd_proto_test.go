package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	applyv1 "k8s.io/apiextensions-apiserver/pkg/client/applyconfiguration/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	crdclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/typed/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	pbser "k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/capstan-io/capstan/apis/scheme"
)

const protobufType = "application/vnd.kubernetes.protobuf"

// crdClient is an apiextensions clientset speaking contentType, and the
// Content-Type of every answer it got.
func (e *env) crdClient(t *testing.T, contentType string) (clientset.Interface, *contentTypes) {
	t.Helper()
	return crdClientset(t, e.Config, contentType)
}

// crdClientset is an apiextensions clientset for base's server speaking
// contentType.
func crdClientset(t *testing.T, base *rest.Config, contentType string) (clientset.Interface, *contentTypes) {
	t.Helper()
	cfg := rest.CopyConfig(base)
	cfg.ContentType = contentType
	cfg.AcceptContentTypes = contentType
	seen := &contentTypes{}
	cfg.Wrap(seen.wrap)
	c, err := clientset.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, seen
}

// widgetCRD is a namespaced CRD of group proto.example.com with a status
// subresource.
func widgetCRD(plural string) *apiextv1.CustomResourceDefinition {
	kind := strings.ToUpper(plural[:1]) + strings.TrimSuffix(plural[1:], "s")
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".proto.example.com", Labels: map[string]string{"test": "proto"}},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "proto.example.com", Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
				Schema: &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{
					Type: "object",
					Properties: map[string]apiextv1.JSONSchemaProps{
						"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
							"size": {Type: "integer", Default: &apiextv1.JSON{Raw: []byte("1")}}}},
					},
				}},
			}},
		},
	}
}

// TestCRDClientset: the apiextensions clientset, configured for JSON and
// for protobuf as kube's own components are, through every verb: the
// answers come in the asked encoding, and the CRD is stored as kube stores
// it (protobuf in the "k8s\x00" envelope, at v1), whatever the client sent.
func TestCRDClientset(t *testing.T) {
	e := start(t)
	for _, tc := range []struct{ name, contentType, plural string }{
		{"JSON", "application/json", "jsonwidgets"},
		{"protobuf", protobufType, "protowidgets"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, seen := e.crdClient(t, tc.contentType)
			crds := c.ApiextensionsV1().CustomResourceDefinitions()
			created, err := crds.Create(ctx(t), widgetCRD(tc.plural), metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if created.Spec.Names.Singular != strings.TrimSuffix(tc.plural, "s") || created.Spec.Conversion == nil ||
				string(created.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["size"].Default.Raw) != "1" {
				t.Fatalf("created = %+v", created.Spec)
			}
			w, err := crds.Watch(ctx(t), metav1.ListOptions{ResourceVersion: created.ResourceVersion,
				FieldSelector: "metadata.name=" + created.Name})
			if err != nil {
				t.Fatalf("watch: %v", err)
			}
			defer w.Stop()
			var established *apiextv1.CustomResourceDefinition
			eventually(t, 10*time.Second, "established", func(c2 context.Context) (bool, error) {
				got, err := crds.Get(c2, created.Name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				established = got
				return hasCRDCondition(got, apiextv1.Established), nil
			})
			wantWatchEvent(t, w, watch.Modified, func(crd *apiextv1.CustomResourceDefinition) bool {
				return hasCRDCondition(crd, apiextv1.Established)
			})
			e.wantKubeStoredCRD(t, created.Name)

			list, err := crds.List(ctx(t), metav1.ListOptions{LabelSelector: "test=proto"})
			if err != nil || !containsCRD(list, created.Name) {
				t.Fatalf("list = %v, %v", list, err)
			}
			established.Spec.Versions[0].AdditionalPrinterColumns = []apiextv1.CustomResourceColumnDefinition{
				{Name: "Size", Type: "integer", JSONPath: ".spec.size"}}
			updated, err := crds.Update(ctx(t), established, metav1.UpdateOptions{})
			if err != nil || len(updated.Spec.Versions[0].AdditionalPrinterColumns) != 1 {
				t.Fatalf("update = %v, %v", updated, err)
			}
			wantWatchEvent(t, w, watch.Modified, func(crd *apiextv1.CustomResourceDefinition) bool {
				return len(crd.Spec.Versions[0].AdditionalPrinterColumns) == 1
			})
			updated.Status.AcceptedNames.Plural = "Not_A_Label"
			if _, err := crds.UpdateStatus(ctx(t), updated, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
				t.Fatalf("status update with an invalid accepted plural: %v, want Invalid", err)
			}
			e.patchCRD(t, crds, created.Name)
			e.crdViews(t, tc.contentType, created.Name)

			if err := crds.Delete(ctx(t), created.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete: %v", err)
			}
			wantWatchEvent(t, w, watch.Deleted, func(*apiextv1.CustomResourceDefinition) bool { return true })
			if _, err := crds.Get(ctx(t), created.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("get after delete: %v", err)
			}
			wantSeen(t, seen, tc.contentType)
		})
	}
	t.Run("deletecollection", func(t *testing.T) {
		c, _ := e.crdClient(t, protobufType)
		crds := c.ApiextensionsV1().CustomResourceDefinitions()
		for _, p := range []string{"gonewidgets", "lostwidgets"} {
			if _, err := crds.Create(ctx(t), widgetCRD(p), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := crds.DeleteCollection(ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "test=proto"}); err != nil {
			t.Fatalf("deletecollection: %v", err)
		}
		eventually(t, 30*time.Second, "CRDs gone", func(c2 context.Context) (bool, error) {
			list, err := crds.List(c2, metav1.ListOptions{LabelSelector: "test=proto"})
			return err == nil && len(list.Items) == 0, err
		})
	})
}

// patchCRD patches a label in with each patch type the clientset sends,
// and applies one server-side.
func (e *env) patchCRD(t *testing.T, crds crdclient.CustomResourceDefinitionInterface, name string) {
	t.Helper()
	for _, p := range []struct {
		pt   types.PatchType
		body string
	}{
		{types.MergePatchType, `{"metadata":{"labels":{"merge":"yes"}}}`},
		{types.StrategicMergePatchType, `{"metadata":{"labels":{"strategic":"yes"}}}`},
		{types.JSONPatchType, `[{"op":"add","path":"/metadata/labels/json","value":"yes"}]`},
	} {
		if _, err := crds.Patch(ctx(t), name, p.pt, []byte(p.body), metav1.PatchOptions{}); err != nil {
			t.Fatalf("%s patch: %v", p.pt, err)
		}
	}
	applied, err := crds.Apply(ctx(t), applyv1.CustomResourceDefinition(name).WithLabels(map[string]string{"applied": "yes"}),
		metav1.ApplyOptions{FieldManager: "e2e", Force: true})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	for _, l := range []string{"merge", "strategic", "json", "applied"} {
		if applied.Labels[l] != "yes" {
			t.Errorf("label %s missing after the patches: %v", l, applied.Labels)
		}
	}
}

// crdViews reads the CRD as a Table (JSON: meta.k8s.io's Table has no
// protobuf form, so a protobuf Table is refused as kube v1.37.2 refuses it,
// in content negotiation) and as
// PartialObjectMetadata in the given encoding.
func (e *env) crdViews(t *testing.T, contentType, name string) {
	t.Helper()
	path := "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + name
	table := e.do(t, http.MethodGet, path, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	var tb metav1.Table
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDecoder(), table.body, &tb); table.code != 200 || err != nil ||
		len(tb.Rows) != 1 || tb.ColumnDefinitions[0].Name != "Name" {
		t.Fatalf("table = %d %v %.300q", table.code, err, table.body)
	}
	if contentType == protobufType {
		r := e.do(t, http.MethodGet, path, nil, "Accept", protobufType+";as=Table;v=v1;g=meta.k8s.io")
		r.wantStatus(t, http.StatusNotAcceptable, "NotAcceptable",
			"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf")
	}
	raw := e.do(t, http.MethodGet, path, nil, "Accept", contentType+";as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
	var one metav1.PartialObjectMetadata
	if err := runtime.DecodeInto(scheme.Codecs.UniversalDeserializer(), raw.body, &one); raw.code != 200 || err != nil ||
		one.Name != name || !strings.HasPrefix(raw.header.Get("Content-Type"), contentType) {
		t.Fatalf("PartialObjectMetadata = %d %s %v %.300q", raw.code, raw.header.Get("Content-Type"), err, raw.body)
	}
	cfg := rest.CopyConfig(e.Config)
	cfg.ContentType = contentType
	md, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pom, err := md.Resource(crdGVR).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil || pom.Name != name || pom.Labels["test"] != "proto" {
		t.Fatalf("metadata get = %v, %v", pom, err)
	}
	poms, err := md.Resource(crdGVR).List(ctx(t), metav1.ListOptions{FieldSelector: "metadata.name=" + name})
	if err != nil || len(poms.Items) != 1 {
		t.Fatalf("metadata list = %v, %v", poms, err)
	}
}

// kubeCRDPrefix is how kube-apiserver's stored CRDs begin: JSON at
// apiextensions.k8s.io/v1beta1, the version its apiextensions server
// still stores although it serves only v1.
const kubeCRDPrefix = `{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1beta1",`

// wantKubeStoredCRD checks that the CRD named name is stored as
// kube-apiserver stores it, and returns it as kube's types read it.
func (e *env) wantKubeStoredCRD(t *testing.T, name string) *apiextv1beta1.CustomResourceDefinition {
	t.Helper()
	return wantKubeCRDValue(t, name, e.EtcdValue(t, "/registry/apiextensions.k8s.io/customresourcedefinitions/"+name))
}

func wantKubeCRDValue(t *testing.T, name string, raw []byte) *apiextv1beta1.CustomResourceDefinition {
	t.Helper()
	if !bytes.HasPrefix(raw, []byte(kubeCRDPrefix)) || !bytes.HasSuffix(raw, []byte("}\n")) {
		t.Fatalf("stored CRD %s is not in kube's form: %.100q", name, raw)
	}
	var crd apiextv1beta1.CustomResourceDefinition
	if err := json.Unmarshal(raw, &crd); err != nil || crd.Name != name {
		t.Fatalf("stored CRD = %v, %v", crd.Name, err)
	}
	return &crd
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

func hasCRDCondition(crd *apiextv1.CustomResourceDefinition, typ apiextv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == typ && c.Status == apiextv1.ConditionTrue {
			return true
		}
	}
	return false
}

func containsCRD(list *apiextv1.CustomResourceDefinitionList, name string) bool {
	for _, crd := range list.Items {
		if crd.Name == name {
			return true
		}
	}
	return false
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
func wantSeen(t *testing.T, seen *contentTypes, contentType string) {
	t.Helper()
	got := seen.list()
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
	e := start(t)
	for _, format := range []string{"JSON", "protobuf"} {
		t.Run(format, func(t *testing.T) { e.storedAsV1(t, format) })
	}
}

func (e *env) storedAsV1(t *testing.T, format string) {
	t.Helper()
	crd := widgetCRD(strings.ToLower(format) + "oldwidgets")
	crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	crd.UID = types.UID("8a6d2f0e-3b55-4a8e-9d57-2f8e6f1f3c0" + strconv.Itoa(len(format)))
	crd.CreationTimestamp = metav1.Now()
	crd.Spec.Names.Singular = strings.TrimSuffix(crd.Spec.Names.Plural, "s")
	crd.Spec.Names.ListKind = crd.Spec.Names.Kind + "List"
	crd.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}
	// Named and established already, as a running capstan left it: the
	// controllers have nothing to write.
	crd.Status = apiextv1.CustomResourceDefinitionStatus{
		StoredVersions: []string{"v1"}, AcceptedNames: crd.Spec.Names,
		Conditions: []apiextv1.CustomResourceDefinitionCondition{
			{Type: apiextv1.NamesAccepted, Status: apiextv1.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found",
				LastTransitionTime: crd.CreationTimestamp},
			{Type: apiextv1.Established, Status: apiextv1.ConditionTrue, Reason: "InitialNamesAccepted",
				Message: "the initial names have been accepted", LastTransitionTime: crd.CreationTimestamp},
		},
	}
	var encoder runtime.Encoder = scheme.Codecs.LegacyCodec(apiextv1.SchemeGroupVersion)
	if format == "protobuf" {
		encoder = scheme.Codecs.EncoderForVersion(pbser.NewSerializer(scheme.Scheme, scheme.Scheme), apiextv1.SchemeGroupVersion)
	}
	old, err := runtime.Encode(encoder, crd)
	if err != nil {
		t.Fatal(err)
	}
	key := "/registry/apiextensions.k8s.io/customresourcedefinitions/" + crd.Name
	e.EtcdPut(t, key, old)
	e.Restart(t)

	c, _ := e.crdClient(t, protobufType)
	crds := c.ApiextensionsV1().CustomResourceDefinitions()
	var got *apiextv1.CustomResourceDefinition
	eventually(t, 30*time.Second, format+"-stored CRD established", func(c2 context.Context) (bool, error) {
		got, err = crds.Get(c2, crd.Name, metav1.GetOptions{})
		return err == nil && hasCRDCondition(got, apiextv1.Established), err
	})
	if got.UID != crd.UID || got.Spec.Names.Kind != crd.Spec.Names.Kind {
		t.Fatalf("read back %s %s", got.UID, got.Spec.Names.Kind)
	}
	if list, err := crds.List(ctx(t), metav1.ListOptions{}); err != nil || !containsCRD(list, crd.Name) {
		t.Fatalf("list = %v, %v", list, err)
	}
	if stored := e.EtcdValue(t, key); !bytes.Equal(stored, old) {
		t.Fatalf("reading rewrote the stored CRD: %.60q", stored)
	}
	got.Labels["migrated"] = "yes"
	if _, err := crds.Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update: %v", err)
	}
	if stored := e.wantKubeStoredCRD(t, crd.Name); stored.UID != crd.UID || stored.Labels["migrated"] != "yes" {
		t.Fatalf("rewritten as %s %v", stored.UID, stored.Labels)
	}
}
