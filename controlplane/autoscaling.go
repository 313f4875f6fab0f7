package controlplane

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/capstan-io/capstan/apis/autoscaling"
	"github.com/capstan-io/capstan/endpoints"
	"github.com/capstan-io/capstan/registry"
)

// priorityAutoscaling orders autoscaling in /apis, as kube.
const priorityAutoscaling = 17500

var autoscalingV2 = autoscalingv2.SchemeGroupVersion

// autoscalingGroup is autoscaling/v2 (preferred) and autoscaling/v1, whose
// HorizontalPodAutoscalers are the same objects: stored as v2, served to v1
// clients through a converting codec.
func (f *storeBuilder) autoscalingGroup() (builtGroup, error) {
	bg := builtGroup{stores: map[string]*registry.Store{}}
	versions := []struct {
		gv   schema.GroupVersion
		spec resourceSpec
	}{
		{autoscalingV2, resourceSpec{name: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler",
			strategy: autoscaling.HPAStrategy{}, status: autoscaling.HPAStatusStrategy{},
			shortNames: []string{"hpa"}, categories: categoryAll,
			new:     func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscaler{} },
			newList: func() runtime.Object { return &autoscalingv2.HorizontalPodAutoscalerList{} }}},
		{autoscalingV1, resourceSpec{name: "horizontalpodautoscalers", kind: "HorizontalPodAutoscaler",
			strategy: autoscaling.HPAV1Strategy{}, status: autoscaling.HPAV1StatusStrategy{},
			shortNames: []string{"hpa"}, categories: categoryAll,
			new:     func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscaler{} },
			newList: func() runtime.Object { return &autoscalingv1.HorizontalPodAutoscalerList{} }}},
	}
	bg.group = endpoints.APIGroup{Name: autoscalingv1.GroupName, Priority: priorityAutoscaling}
	for _, v := range versions {
		store, resources, err := f.build(v.gv, v.spec)
		if err != nil {
			return bg, err
		}
		if v.gv == autoscalingV2 {
			bg.stores[v.spec.name] = store
		}
		bg.group.Versions = append(bg.group.Versions, endpoints.GroupVersion{Version: v.gv.Version, Resources: resources})
	}
	return bg, nil
}
