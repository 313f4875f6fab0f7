package conversion

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

var (
	v1 = schema.GroupVersion{Group: "stable.example.com", Version: "v1"}
	v2 = schema.GroupVersion{Group: "stable.example.com", Version: "v2"}
	v3 = schema.GroupVersion{Group: "stable.example.com", Version: "v3"}
)

// testCRD is crontabs.stable.example.com with versions v1 (storage), v2
// and v3 (not served), converted by conversion.
func testCRD(conversion *apiextv1.CustomResourceConversion) *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "crontabs.stable.example.com"},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: "stable.example.com",
			Names: apiextv1.CustomResourceDefinitionNames{
				Plural: "crontabs", Singular: "crontab", Kind: "CronTab", ListKind: "CronTabList",
			},
			Scope: apiextv1.NamespaceScoped,
			Versions: []apiextv1.CustomResourceDefinitionVersion{
				{Name: "v1", Served: true, Storage: true,
					SelectableFields: []apiextv1.SelectableField{{JSONPath: ".spec.color"}},
					Subresources: &apiextv1.CustomResourceSubresources{Scale: &apiextv1.CustomResourceSubresourceScale{
						SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas",
					}}},
				{Name: "v2", Served: true},
				{Name: "v3", Served: false},
			},
			Conversion: conversion,
		},
	}
}

func cronTab(gv schema.GroupVersion, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gv.String(),
		"kind":       "CronTab",
		"metadata": map[string]any{
			"name": name, "namespace": "default", "uid": "uid-" + name,
			"resourceVersion": "7", "finalizers": []any{"example.com/keep"},
			"labels": map[string]any{"app": "cron"},
		},
		"spec": spec,
	}}
}

func cronTabList(gv schema.GroupVersion, items ...*unstructured.Unstructured) *unstructured.UnstructuredList {
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": gv.String(), "kind": "CronTabList",
		"metadata": map[string]any{"resourceVersion": "9"},
	}}
	for _, item := range items {
		list.Items = append(list.Items, *item)
	}
	return list
}

func newConverter(t *testing.T, crd *apiextv1.CustomResourceDefinition, opts Options) Converter {
	t.Helper()
	c, err := New(crd, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func TestNoneConvertsObject(t *testing.T) {
	for _, conversion := range []*apiextv1.CustomResourceConversion{nil, {Strategy: apiextv1.NoneConverter}} {
		c := newConverter(t, testCRD(conversion), Options{})
		in := cronTab(v1, "a", map[string]any{"cronSpec": "* * * * */5"})
		before := in.DeepCopy()

		out, err := c.Convert(context.Background(), in, v2)
		if err != nil {
			t.Fatal(err)
		}
		want := before.DeepCopy()
		want.SetAPIVersion("stable.example.com/v2")
		if !reflect.DeepEqual(out, want) {
			t.Errorf("got %v, want %v", out, want)
		}
		if !reflect.DeepEqual(in, before) {
			t.Errorf("the input changed: %v", in)
		}
		// The result shares nothing with the input.
		out.(*unstructured.Unstructured).Object["spec"].(map[string]any)["cronSpec"] = "changed"
		if in.Object["spec"].(map[string]any)["cronSpec"] != "* * * * */5" {
			t.Error("the result shares the input's spec")
		}
	}
}

func TestNoneConvertsList(t *testing.T) {
	c := newConverter(t, testCRD(&apiextv1.CustomResourceConversion{Strategy: apiextv1.NoneConverter}), Options{})
	in := cronTabList(v1, cronTab(v1, "a", nil), cronTab(v2, "b", nil), cronTab(v3, "c", nil))
	before := in.DeepCopy()

	out, err := c.Convert(context.Background(), in, v2)
	if err != nil {
		t.Fatal(err)
	}
	list := out.(*unstructured.UnstructuredList)
	if got := list.GroupVersionKind(); got != v2.WithKind("CronTabList") {
		t.Errorf("list is %v", got)
	}
	if list.GetResourceVersion() != "9" {
		t.Errorf("list resourceVersion is %q", list.GetResourceVersion())
	}
	for i, item := range list.Items {
		if item.GroupVersionKind() != v2.WithKind("CronTab") || item.GetName() != before.Items[i].GetName() {
			t.Errorf("item %d is %v %s", i, item.GroupVersionKind(), item.GetName())
		}
	}
	if !reflect.DeepEqual(in, before) {
		t.Error("the input changed")
	}
}

func TestInvalidVersions(t *testing.T) {
	c := newConverter(t, testCRD(nil), Options{})
	other := schema.GroupVersion{Group: "other.example.com", Version: "v1"}
	for _, tc := range []struct {
		in   runtime.Object
		to   schema.GroupVersion
		want string
	}{
		{cronTab(v1, "a", nil), schema.GroupVersion{Group: "stable.example.com", Version: "v9"},
			"request to convert CR to an invalid group/version: stable.example.com/v9"},
		{cronTab(v1, "a", nil), other, "request to convert CR to an invalid group/version: other.example.com/v1"},
		{cronTab(other, "a", nil), v2, "request to convert CR from an invalid group/version: other.example.com/v1"},
		{cronTabList(v1, cronTab(v1, "a", nil), cronTab(other, "b", nil)), v2,
			"request to convert CR list failed, list index 1 has invalid group/version: other.example.com/v1"},
		{&metav1.Status{}, v2, "input type *v1.Status is not valid for custom resource conversion"},
	} {
		_, err := c.Convert(context.Background(), tc.in, tc.to)
		if err == nil || err.Error() != tc.want {
			t.Errorf("got error %v, want %q", err, tc.want)
			continue
		}
		checkStatusError(t, err)
	}
}

// checkStatusError checks that err is answered as kube answers a failed
// conversion: a 500 Failure Status with the error's message.
func checkStatusError(t *testing.T, err error) {
	t.Helper()
	var cerr *Error
	if !errors.As(err, &cerr) {
		t.Errorf("error %T is not a *conversion.Error", err)
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("error %T is not an APIStatus", err)
	}
	s := status.Status()
	if s.Code != http.StatusInternalServerError || s.Status != metav1.StatusFailure || s.Message != err.Error() {
		t.Errorf("status %+v for %q", s, err)
	}
}

func TestUnknownStrategy(t *testing.T) {
	_, err := New(testCRD(&apiextv1.CustomResourceConversion{Strategy: "Magic"}), Options{})
	if want := `unknown conversion strategy "Magic" for CRD crontabs.stable.example.com`; err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}

func TestObjectConvertor(t *testing.T) {
	oc := NewObjectConvertor(newConverter(t, testCRD(nil), Options{}))
	in := cronTab(v1, "a", map[string]any{"cronSpec": "x"})

	out, err := oc.ConvertToVersion(in, v2)
	if err != nil {
		t.Fatal(err)
	}
	if out.GetObjectKind().GroupVersionKind() != v2.WithKind("CronTab") || in.GetAPIVersion() != v1.String() {
		t.Errorf("converted to %v, input now %s", out.GetObjectKind().GroupVersionKind(), in.GetAPIVersion())
	}

	into := &unstructured.Unstructured{}
	into.SetGroupVersionKind(v2.WithKind("CronTab"))
	if err := oc.Convert(in, into, nil); err != nil {
		t.Fatal(err)
	}
	if into.GetAPIVersion() != v2.String() || into.GetName() != "a" {
		t.Errorf("converted into %v", into)
	}

	other := schema.GroupVersion{Group: "other.example.com", Version: "v1"}
	if _, err := oc.ConvertToVersion(in, other); err == nil ||
		err.Error() != `stable.example.com/v1, Kind=CronTab is unstructured and is not suitable for converting to "other.example.com/v1"` {
		t.Errorf("got %v", err)
	}
	if err := oc.Convert(&metav1.Status{}, into, nil); err == nil {
		t.Error("converted a Status")
	}

	for _, tc := range []struct {
		gv    schema.GroupVersion
		label string
		ok    bool
	}{
		{v1, "metadata.name", true},
		{v1, "metadata.namespace", true},
		{v1, "spec.color", true},
		{v2, "spec.color", false},
		{v1, "spec.size", false},
	} {
		l, v, err := oc.ConvertFieldLabel(tc.gv.WithKind("CronTab"), tc.label, "x")
		if tc.ok && (err != nil || l != tc.label || v != "x") {
			t.Errorf("%v %s: %s %s %v", tc.gv, tc.label, l, v, err)
		}
		if !tc.ok && (err == nil || err.Error() != "field label not supported: "+tc.label) {
			t.Errorf("%v %s: %v", tc.gv, tc.label, err)
		}
	}

	clusterCRD := testCRD(nil)
	clusterCRD.Spec.Scope = apiextv1.ClusterScoped
	clusterOC := NewObjectConvertor(newConverter(t, clusterCRD, Options{}))
	if _, _, err := clusterOC.ConvertFieldLabel(v1.WithKind("CronTab"), "metadata.namespace", "x"); err == nil {
		t.Error("metadata.namespace selects cluster-scoped resources")
	}
}

func TestObjectConvertorScale(t *testing.T) {
	oc := NewObjectConvertor(newConverter(t, testCRD(nil), Options{}))
	scale := &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"},
		Spec:       autoscalingv1.ScaleSpec{Replicas: 3},
		Status:     autoscalingv1.ScaleStatus{Replicas: 2, Selector: "app=cron"},
	}
	u := &unstructured.Unstructured{}
	if err := oc.Convert(scale, u, nil); err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != "Scale" || u.GetAPIVersion() != "autoscaling/v1" || u.Object["spec"].(map[string]any)["replicas"] != int64(3) {
		t.Errorf("unstructured scale %v", u.Object)
	}
	back := &autoscalingv1.Scale{}
	if err := oc.Convert(u, back, nil); err != nil {
		t.Fatal(err)
	}
	if back.Spec.Replicas != 3 || back.Status.Selector != "app=cron" || back.Name != "a" {
		t.Errorf("scale back %+v", back)
	}
	out, err := oc.ConvertToVersion(scale, autoscalingv1.SchemeGroupVersion)
	if err != nil || out.(*autoscalingv1.Scale).Spec.Replicas != 3 || out == runtime.Object(scale) {
		t.Errorf("ConvertToVersion: %v %v", out, err)
	}

	// Without a scale subresource, a Scale is no custom resource.
	noScale := testCRD(nil)
	noScale.Spec.Versions[0].Subresources = nil
	if err := NewObjectConvertor(newConverter(t, noScale, Options{})).Convert(scale, u, nil); err == nil {
		t.Error("converted a Scale for a CRD without a scale subresource")
	}
}

// TestCRDFieldManager records managed fields through apimachinery's CRD
// field manager, which converts to the hub version and back with the
// ObjectConvertor.
func TestCRDFieldManager(t *testing.T) {
	oc := NewObjectConvertor(newConverter(t, testCRD(nil), Options{}))
	fm, err := managedfields.NewDefaultCRDFieldManager(
		managedfields.NewDeducedTypeConverter(), oc,
		unstructuredscheme.NewUnstructuredDefaulter(), unstructuredscheme.NewUnstructuredCreator(),
		v2.WithKind("CronTab"), v1, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(v2.WithKind("CronTab"))
	obj := cronTab(v2, "a", map[string]any{"schedule": "* * * * */5"})

	out, err := fm.Update(live, obj, "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	managed := out.(*unstructured.Unstructured).GetManagedFields()
	if len(managed) != 1 || managed[0].Manager != "kubectl" || managed[0].APIVersion != "stable.example.com/v2" {
		t.Fatalf("managed fields %+v", managed)
	}
	if out.GetObjectKind().GroupVersionKind() != v2.WithKind("CronTab") {
		t.Errorf("result is %v", out.GetObjectKind().GroupVersionKind())
	}
}
