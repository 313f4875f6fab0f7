package convert

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	arv1 "k8s.io/api/admissionregistration/v1"
	arv1beta1 "k8s.io/api/admissionregistration/v1beta1"
	certificatesv1 "k8s.io/api/certificates/v1"
	certificatesv1beta1 "k8s.io/api/certificates/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	svmv1 "k8s.io/api/storagemigration/v1"
	svmv1beta1 "k8s.io/api/storagemigration/v1beta1"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
)

// A beta version of a kube 1.37 resource is, field for field, the GA
// version under other Go types, except where resource.k8s.io/v1beta1
// nests differently (rewriteResourceV1beta1). So one conversion serves
// every pair: the object's JSON, with the rewrite of the pair if any,
// decoded as the other type. It is slower than kube's generated
// field-by-field functions, and only beta versions, off by default, pay it.

// tree is an object's JSON decoded as maps, slices and json.Numbers.
type tree = map[string]any

// rewrite changes an object's tree from one version's shape to the other's.
type rewrite func(tree)

// betaPair is a beta kind, its GA kind and the rewrites between them.
type betaPair struct {
	beta, ga         runtime.Object
	betaList, gaList runtime.Object
	toGA, fromGA     rewrite
}

// betaPairs are the beta kinds kube 1.37 serves behind --runtime-config
// whose objects are stored as GA ones.
func betaPairs() []betaPair {
	rv1beta1 := func(beta, ga, betaList, gaList runtime.Object, toGA, fromGA rewrite) betaPair {
		return betaPair{beta: beta, ga: ga, betaList: betaList, gaList: gaList, toGA: toGA, fromGA: fromGA}
	}
	same := func(beta, ga, betaList, gaList runtime.Object) betaPair {
		return betaPair{beta: beta, ga: ga, betaList: betaList, gaList: gaList}
	}
	return []betaPair{
		rv1beta1(&resourcev1beta1.DeviceClass{}, &resourcev1.DeviceClass{},
			&resourcev1beta1.DeviceClassList{}, &resourcev1.DeviceClassList{}, nil, nil),
		rv1beta1(&resourcev1beta1.ResourceClaim{}, &resourcev1.ResourceClaim{},
			&resourcev1beta1.ResourceClaimList{}, &resourcev1.ResourceClaimList{},
			claimRequests(requestToV1, "spec"), claimRequests(requestToV1beta1, "spec")),
		rv1beta1(&resourcev1beta1.ResourceClaimTemplate{}, &resourcev1.ResourceClaimTemplate{},
			&resourcev1beta1.ResourceClaimTemplateList{}, &resourcev1.ResourceClaimTemplateList{},
			claimRequests(requestToV1, "spec", "spec"), claimRequests(requestToV1beta1, "spec", "spec")),
		rv1beta1(&resourcev1beta1.ResourceSlice{}, &resourcev1.ResourceSlice{},
			&resourcev1beta1.ResourceSliceList{}, &resourcev1.ResourceSliceList{},
			sliceDevices(deviceToV1), sliceDevices(deviceToV1beta1)),
		same(&resourcev1beta2.DeviceClass{}, &resourcev1.DeviceClass{}, &resourcev1beta2.DeviceClassList{}, &resourcev1.DeviceClassList{}),
		same(&resourcev1beta2.ResourceClaim{}, &resourcev1.ResourceClaim{}, &resourcev1beta2.ResourceClaimList{}, &resourcev1.ResourceClaimList{}),
		same(&resourcev1beta2.ResourceClaimTemplate{}, &resourcev1.ResourceClaimTemplate{},
			&resourcev1beta2.ResourceClaimTemplateList{}, &resourcev1.ResourceClaimTemplateList{}),
		same(&resourcev1beta2.ResourceSlice{}, &resourcev1.ResourceSlice{}, &resourcev1beta2.ResourceSliceList{}, &resourcev1.ResourceSliceList{}),
		same(&resourcev1beta2.DeviceTaintRule{}, &resourcev1.DeviceTaintRule{},
			&resourcev1beta2.DeviceTaintRuleList{}, &resourcev1.DeviceTaintRuleList{}),
		same(&certificatesv1beta1.ClusterTrustBundle{}, &certificatesv1.ClusterTrustBundle{},
			&certificatesv1beta1.ClusterTrustBundleList{}, &certificatesv1.ClusterTrustBundleList{}),
		same(&certificatesv1beta1.PodCertificateRequest{}, &certificatesv1.PodCertificateRequest{},
			&certificatesv1beta1.PodCertificateRequestList{}, &certificatesv1.PodCertificateRequestList{}),
		same(&arv1beta1.MutatingAdmissionPolicy{}, &arv1.MutatingAdmissionPolicy{},
			&arv1beta1.MutatingAdmissionPolicyList{}, &arv1.MutatingAdmissionPolicyList{}),
		same(&arv1beta1.MutatingAdmissionPolicyBinding{}, &arv1.MutatingAdmissionPolicyBinding{},
			&arv1beta1.MutatingAdmissionPolicyBindingList{}, &arv1.MutatingAdmissionPolicyBindingList{}),
		same(&svmv1beta1.StorageVersionMigration{}, &svmv1.StorageVersionMigration{},
			&svmv1beta1.StorageVersionMigrationList{}, &svmv1.StorageVersionMigrationList{}),
	}
}

// AddBetaConversionFuncs registers the conversions between the beta kinds
// of betaPairs and their GA kinds, objects and lists, both ways.
func AddBetaConversionFuncs(s *runtime.Scheme) error {
	for _, p := range betaPairs() {
		for _, f := range []struct {
			a, b any
			rw   rewrite
			list bool
		}{
			{p.beta, p.ga, p.toGA, false}, {p.ga, p.beta, p.fromGA, false},
			{p.betaList, p.gaList, p.toGA, true}, {p.gaList, p.betaList, p.fromGA, true},
		} {
			rw, list := f.rw, f.list
			if err := s.AddConversionFunc(f.a, f.b, func(a, b any, _ conversion.Scope) error {
				return ByJSON(a, b, rw, list)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ByJSON converts in to out, pointers to two types of the same JSON shape
// once rw (if any) has rewritten the tree of in, or of each item of a list.
// TypeMeta is left to the caller, as in every conversion of the scheme. out
// is reset first and shares no memory with in.
func ByJSON(in, out any, rw rewrite, list bool) error {
	data, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("converting %T to %T: %w", in, out, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var t tree
	if err := dec.Decode(&t); err != nil {
		return fmt.Errorf("converting %T to %T: %w", in, out, err)
	}
	objects := []tree{t}
	if list {
		objects = objects[:0]
		items, _ := t["items"].([]any)
		for _, item := range items {
			if m, ok := item.(tree); ok {
				objects = append(objects, m)
			}
		}
	}
	delete(t, "apiVersion")
	delete(t, "kind")
	for _, obj := range objects {
		delete(obj, "apiVersion")
		delete(obj, "kind")
		if rw != nil {
			rw(obj)
		}
	}
	if data, err = json.Marshal(t); err != nil {
		return fmt.Errorf("converting %T to %T: %w", in, out, err)
	}
	v := reflect.ValueOf(out).Elem()
	v.Set(reflect.Zero(v.Type()))
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("converting %T to %T: %w", in, out, err)
	}
	return nil
}

// at returns the object at path under t, nil when a step is missing.
func at(t tree, path ...string) tree {
	for _, p := range path {
		next, _ := t[p].(tree)
		if next == nil {
			return nil
		}
		t = next
	}
	return t
}

// eachObject calls fn on every object of the list at path under t.
func eachObject(t tree, fn func(tree), path ...string) {
	parent := at(t, path[:len(path)-1]...)
	if parent == nil {
		return
	}
	items, _ := parent[path[len(path)-1]].([]any)
	for _, item := range items {
		if m, ok := item.(tree); ok {
			fn(m)
		}
	}
}
