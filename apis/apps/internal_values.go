package apps

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// kube validates its internal types, whose fields carry no JSON tags, so
// where its messages print a refused struct they show the internal field
// names: {"Type":"Sometimes","RollingUpdate":null}. These types have those
// shapes, so that capstan's messages read the same.

type internalStrategy[R any] struct {
	Type          string
	RollingUpdate *R
}

// internalRollingUpdate is the internal RollingUpdateDeployment and
// RollingUpdateDaemonSet alike.
type internalRollingUpdate struct {
	MaxUnavailable intstr.IntOrString
	MaxSurge       intstr.IntOrString
}

type internalRollingUpdateStatefulSet struct {
	Partition      int32
	MaxUnavailable *intstr.IntOrString
}

func surgeAndUnavailable(unavailable, surge *intstr.IntOrString) *internalRollingUpdate {
	out := &internalRollingUpdate{}
	if unavailable != nil {
		out.MaxUnavailable = *unavailable
	}
	if surge != nil {
		out.MaxSurge = *surge
	}
	return out
}

func internalDeploymentStrategy(s *appsv1.DeploymentStrategy) internalStrategy[internalRollingUpdate] {
	out := internalStrategy[internalRollingUpdate]{Type: string(s.Type)}
	if r := s.RollingUpdate; r != nil {
		out.RollingUpdate = surgeAndUnavailable(r.MaxUnavailable, r.MaxSurge)
	}
	return out
}

func internalDaemonSetStrategy(s *appsv1.DaemonSetUpdateStrategy) internalStrategy[internalRollingUpdate] {
	out := internalStrategy[internalRollingUpdate]{Type: string(s.Type)}
	if r := s.RollingUpdate; r != nil {
		out.RollingUpdate = surgeAndUnavailable(r.MaxUnavailable, r.MaxSurge)
	}
	return out
}

func internalStatefulSetStrategy(s *appsv1.StatefulSetUpdateStrategy) internalStrategy[internalRollingUpdateStatefulSet] {
	return internalStrategy[internalRollingUpdateStatefulSet]{Type: string(s.Type), RollingUpdate: internalRollingUpdateOf(s.RollingUpdate)}
}

func internalRollingUpdateOf(r *appsv1.RollingUpdateStatefulSetStrategy) *internalRollingUpdateStatefulSet {
	if r == nil {
		return nil
	}
	out := &internalRollingUpdateStatefulSet{MaxUnavailable: r.MaxUnavailable}
	if r.Partition != nil {
		out.Partition = *r.Partition
	}
	return out
}
