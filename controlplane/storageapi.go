package controlplane

import (
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	storageapi "github.com/capstan-io/capstan/apis/storage"
)

// priorityStorage orders storage.k8s.io in /apis, as kube.
const priorityStorage = 16800

// storageGroup is storage.k8s.io/v1.
func (f *storeBuilder) storageGroup() (builtGroup, error) {
	specs := []resourceSpec{
		{name: "storageclasses", kind: "StorageClass", strategy: storageapi.StorageClassStrategy{}, shortNames: []string{"sc"},
			new: func() runtime.Object { return &storagev1.StorageClass{} }, newList: func() runtime.Object { return &storagev1.StorageClassList{} }},
		{name: "csidrivers", kind: "CSIDriver", strategy: storageapi.CSIDriverStrategy{},
			new: func() runtime.Object { return &storagev1.CSIDriver{} }, newList: func() runtime.Object { return &storagev1.CSIDriverList{} }},
		{name: "csinodes", kind: "CSINode", strategy: storageapi.CSINodeStrategy{}, status: storageapi.CSINodeStatusStrategy{},
			new: func() runtime.Object { return &storagev1.CSINode{} }, newList: func() runtime.Object { return &storagev1.CSINodeList{} }},
		{name: "csistoragecapacities", kind: "CSIStorageCapacity", strategy: storageapi.CSIStorageCapacityStrategy{},
			new:     func() runtime.Object { return &storagev1.CSIStorageCapacity{} },
			newList: func() runtime.Object { return &storagev1.CSIStorageCapacityList{} }},
		{name: "volumeattachments", kind: "VolumeAttachment", strategy: storageapi.VolumeAttachmentStrategy{},
			status:  storageapi.VolumeAttachmentStatusStrategy{},
			new:     func() runtime.Object { return &storagev1.VolumeAttachment{} },
			newList: func() runtime.Object { return &storagev1.VolumeAttachmentList{} }},
		volumeAttributesClassSpec(),
	}
	return f.buildGroup(storagev1.GroupName, priorityStorage, storagev1.SchemeGroupVersion, specs)
}
