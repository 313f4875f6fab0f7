package controlplane

import (
	"fmt"

	certificatesv1 "k8s.io/api/certificates/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	storagev1 "k8s.io/api/storage/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	svmv1beta1 "k8s.io/api/storagemigration/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"

	"github.com/capstan-io/capstan/apis/certificates"
	"github.com/capstan-io/capstan/apis/resource"
	storageapi "github.com/capstan-io/capstan/apis/storage"
	"github.com/capstan-io/capstan/apis/storagemigration"
	"github.com/capstan-io/capstan/authz"
	"github.com/capstan-io/capstan/controlplane/controllers/storageversionmigrator"
	"github.com/capstan-io/capstan/server"
)

// Group priorities of the groups GA in kube v1.37, as kube's APIService
// priorities.
const (
	priorityResource         = 16200
	priorityStorageMigration = 15800
)

// resourceGroup is resource.k8s.io/v1, dynamic resource allocation. Claims
// and templates asking for admin access read their namespace's labels;
// binding a claim is authorized.
func (f *storeBuilder) resourceGroup(access resource.Access) (builtGroup, error) {
	specs := []resourceSpec{
		{name: "deviceclasses", kind: "DeviceClass", strategy: resource.DeviceClassStrategy{},
			new: func() runtime.Object { return &resourcev1.DeviceClass{} }, newList: func() runtime.Object { return &resourcev1.DeviceClassList{} }},
		{name: "devicetaintrules", kind: "DeviceTaintRule", strategy: resource.DeviceTaintRuleStrategy{},
			status: resource.DeviceTaintRuleStatusStrategy{},
			new:    func() runtime.Object { return &resourcev1.DeviceTaintRule{} }, newList: func() runtime.Object { return &resourcev1.DeviceTaintRuleList{} }},
		{name: "resourceclaims", kind: "ResourceClaim", strategy: resource.ResourceClaimStrategy{Access: access},
			status: resource.ResourceClaimStatusStrategy{ResourceClaimStrategy: resource.ResourceClaimStrategy{Access: access}},
			new:    func() runtime.Object { return &resourcev1.ResourceClaim{} }, newList: func() runtime.Object { return &resourcev1.ResourceClaimList{} }},
		{name: "resourceclaimtemplates", kind: "ResourceClaimTemplate", strategy: resource.ResourceClaimTemplateStrategy{Access: access},
			new:     func() runtime.Object { return &resourcev1.ResourceClaimTemplate{} },
			newList: func() runtime.Object { return &resourcev1.ResourceClaimTemplateList{} }},
		{name: "resourceslices", kind: "ResourceSlice", strategy: resource.ResourceSliceStrategy{},
			new: func() runtime.Object { return &resourcev1.ResourceSlice{} }, newList: func() runtime.Object { return &resourcev1.ResourceSliceList{} }},
	}
	bg, err := f.buildGroup(resourcev1.GroupName, priorityResource, resourcev1.SchemeGroupVersion, specs)
	if err != nil {
		return bg, err
	}
	return bg, f.addBetas(&bg, resourcev1.SchemeGroupVersion, specs,
		betaGV{resourcev1beta2.SchemeGroupVersion, map[string]betaKind{
			"deviceclasses":          kindOf[resourcev1beta2.DeviceClass, resourcev1beta2.DeviceClassList](),
			"devicetaintrules":       kindOf[resourcev1beta2.DeviceTaintRule, resourcev1beta2.DeviceTaintRuleList](),
			"resourceclaims":         kindOf[resourcev1beta2.ResourceClaim, resourcev1beta2.ResourceClaimList](),
			"resourceclaimtemplates": kindOf[resourcev1beta2.ResourceClaimTemplate, resourcev1beta2.ResourceClaimTemplateList](),
			"resourceslices":         kindOf[resourcev1beta2.ResourceSlice, resourcev1beta2.ResourceSliceList](),
		}},
		betaGV{resourcev1beta1.SchemeGroupVersion, map[string]betaKind{
			"deviceclasses":          kindOf[resourcev1beta1.DeviceClass, resourcev1beta1.DeviceClassList](),
			"resourceclaims":         kindOf[resourcev1beta1.ResourceClaim, resourcev1beta1.ResourceClaimList](),
			"resourceclaimtemplates": kindOf[resourcev1beta1.ResourceClaimTemplate, resourcev1beta1.ResourceClaimTemplateList](),
			"resourceslices":         kindOf[resourcev1beta1.ResourceSlice, resourcev1beta1.ResourceSliceList](),
		}})
}

// storageMigrationGroup is storagemigration.k8s.io/v1.
func (f *storeBuilder) storageMigrationGroup() (builtGroup, error) {
	specs := []resourceSpec{
		{name: "storageversionmigrations", kind: "StorageVersionMigration", strategy: storagemigration.Strategy{},
			status:  storagemigration.StatusStrategy{},
			new:     func() runtime.Object { return &svmv1.StorageVersionMigration{} },
			newList: func() runtime.Object { return &svmv1.StorageVersionMigrationList{} }},
	}
	bg, err := f.buildGroup(svmv1.GroupName, priorityStorageMigration, svmv1.SchemeGroupVersion, specs)
	if err != nil {
		return bg, err
	}
	return bg, f.addBetas(&bg, svmv1.SchemeGroupVersion, specs, betaGV{svmv1beta1.SchemeGroupVersion, map[string]betaKind{
		"storageversionmigrations": kindOf[svmv1beta1.StorageVersionMigration, svmv1beta1.StorageVersionMigrationList](),
	}})
}

// volumeAttributesClassSpec is storage.k8s.io/v1 VolumeAttributesClasses.
func volumeAttributesClassSpec() resourceSpec {
	return resourceSpec{name: "volumeattributesclasses", kind: "VolumeAttributesClass", strategy: storageapi.VolumeAttributesClassStrategy{},
		shortNames: []string{"vac"},
		new:        func() runtime.Object { return &storagev1.VolumeAttributesClass{} },
		newList:    func() runtime.Object { return &storagev1.VolumeAttributesClassList{} }}
}

// trustSpecs are certificates.k8s.io/v1 ClusterTrustBundles and
// PodCertificateRequests, whose status only a user who may sign for the
// request's signer writes.
func trustSpecs(az authz.Authorizer) []resourceSpec {
	return []resourceSpec{
		{name: "clustertrustbundles", kind: "ClusterTrustBundle", strategy: certificates.ClusterTrustBundleStrategy{},
			new:     func() runtime.Object { return &certificatesv1.ClusterTrustBundle{} },
			newList: func() runtime.Object { return &certificatesv1.ClusterTrustBundleList{} }},
		{name: "podcertificaterequests", kind: "PodCertificateRequest", strategy: certificates.PodCertificateRequestStrategy{},
			status:  certificates.PodCertificateRequestStatusStrategy{Authorizer: az, Now: metav1.Now},
			new:     func() runtime.Object { return &certificatesv1.PodCertificateRequest{} },
			newList: func() runtime.Object { return &certificatesv1.PodCertificateRequestList{} }},
	}
}

// runStorageVersionMigrator performs StorageVersionMigrations, which kube
// leaves to kube-controller-manager, through the loopback client.
func (c Config) runStorageVersionMigrator(hc server.HookContext) error {
	client, _, disco, err := loopbackClients(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(hc.LoopbackClientConfig)
	if err != nil {
		return err
	}
	ctrl, err := storageversionmigrator.New(storageversionmigrator.Config{Client: client, Dynamic: dyn, Logger: c.Logger,
		Mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disco))})
	if err != nil {
		return fmt.Errorf("storage version migrator: %w", err)
	}
	// kube runs it in its controller manager, which starts after the API
	// server.
	hc.AfterHooks(func() { ctrl.Run(hc) })
	return nil
}
