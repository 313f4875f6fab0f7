package apps

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// claim is a valid claim template named data.
func claim() corev1.PersistentVolumeClaim {
	return corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceStorage: resource.MustParse("1Gi"),
			}},
		},
	}
}

// newStatefulSet is a valid, defaulted stateful set whose pods mount the
// claim template.
func newStatefulSet() *appsv1.StatefulSet {
	t := template()
	t.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return defaulted(StatefulSetStrategy{}, &appsv1.StatefulSet{
		ObjectMeta: meta("db"),
		Spec: appsv1.StatefulSetSpec{
			Selector: selector(), Template: t, ServiceName: "db",
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claim()},
		},
	})
}

func TestStatefulSetDefaults(t *testing.T) {
	ss := newStatefulSet()
	want := appsv1.StatefulSetSpec{
		Replicas:            ptr.To[int32](1),
		PodManagementPolicy: appsv1.OrderedReadyPodManagement,
		UpdateStrategy: appsv1.StatefulSetUpdateStrategy{
			Type: appsv1.RollingUpdateStatefulSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{
				Partition: ptr.To[int32](0), MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			},
		},
		RevisionHistoryLimit: ptr.To[int32](10),
		PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		},
	}
	got := ss.Spec
	got.Selector, got.Template, got.ServiceName, got.VolumeClaimTemplates = nil, corev1.PodTemplateSpec{}, "", nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spec = %+v\nwant %+v", got, want)
	}
	c := ss.Spec.VolumeClaimTemplates[0]
	if c.APIVersion != "v1" || c.Kind != "PersistentVolumeClaim" || c.Status.Phase != corev1.ClaimPending ||
		c.Spec.VolumeMode == nil || *c.Spec.VolumeMode != corev1.PersistentVolumeFilesystem {
		t.Errorf("claim template = %+v", c)
	}

	onDelete := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}}
	StatefulSetStrategy{}.Default(onDelete)
	if onDelete.Spec.UpdateStrategy.RollingUpdate != nil {
		t.Errorf("OnDelete got a rollingUpdate")
	}
	rolling := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}}}
	StatefulSetStrategy{}.Default(rolling)
	if rolling.Spec.UpdateStrategy.RollingUpdate != nil {
		t.Errorf("explicit RollingUpdate without parameters got some, as kube does not")
	}
	milli := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
		Spec: corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceStorage: resource.MustParse("1.0001m"),
		}}},
	}}}}
	StatefulSetStrategy{}.Default(milli)
	if q := milli.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "2m" {
		t.Errorf("storage = %s, want rounded up to 2m", q.String())
	}
}

func TestValidateStatefulSet(t *testing.T) {
	rolling := func(ss *appsv1.StatefulSet) *appsv1.RollingUpdateStatefulSetStrategy {
		return ss.Spec.UpdateStrategy.RollingUpdate
	}
	tests := []struct {
		name   string
		mutate func(*appsv1.StatefulSet)
		want   []wantErr
	}{
		{"valid", func(*appsv1.StatefulSet) {}, nil},
		{"no service name", func(ss *appsv1.StatefulSet) { ss.Spec.ServiceName = "" }, nil},
		{"bad service name", func(ss *appsv1.StatefulSet) { ss.Spec.ServiceName = "db.svc" }, []wantErr{inv("spec.serviceName")}},
		{"parallel", func(ss *appsv1.StatefulSet) { ss.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }, nil},
		{"no pod management", func(ss *appsv1.StatefulSet) { ss.Spec.PodManagementPolicy = "" }, []wantErr{req("spec.podManagementPolicy")}},
		{"bad pod management", func(ss *appsv1.StatefulSet) { ss.Spec.PodManagementPolicy = "Random" }, []wantErr{inv("spec.podManagementPolicy")}},
		{"no update strategy", func(ss *appsv1.StatefulSet) { ss.Spec.UpdateStrategy.Type = "" }, []wantErr{req("spec.updateStrategy")}},
		{"bad update strategy", func(ss *appsv1.StatefulSet) { ss.Spec.UpdateStrategy.Type = "Blue" }, []wantErr{inv("spec.updateStrategy")}},
		{"recreate gated", func(ss *appsv1.StatefulSet) {
			ss.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RecreateStatefulSetStrategyType}
		}, []wantErr{inv("spec.updateStrategy")}},
		{"on delete with rolling", func(ss *appsv1.StatefulSet) { ss.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType },
			[]wantErr{inv("spec.updateStrategy.rollingUpdate")}},
		{"negative partition", func(ss *appsv1.StatefulSet) { rolling(ss).Partition = ptr.To[int32](-1) },
			[]wantErr{inv("spec.updateStrategy.rollingUpdate.partition")}},
		{"zero unavailable", func(ss *appsv1.StatefulSet) { rolling(ss).MaxUnavailable = ptr.To(intstr.FromString("0%")) },
			[]wantErr{inv("spec.updateStrategy.rollingUpdate.maxUnavailable")}},
		{"negative unavailable", func(ss *appsv1.StatefulSet) { rolling(ss).MaxUnavailable = ptr.To(intstr.FromInt32(-1)) },
			[]wantErr{inv("spec.updateStrategy.rollingUpdate.maxUnavailable")}},
		{"unavailable over 100%", func(ss *appsv1.StatefulSet) { rolling(ss).MaxUnavailable = ptr.To(intstr.FromString("150%")) },
			[]wantErr{inv("spec.updateStrategy.rollingUpdate.maxUnavailable")}},
		{"bad retention", func(ss *appsv1.StatefulSet) { ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenScaled = "Keep" },
			[]wantErr{unsupp("spec.persistentVolumeClaimRetentionPolicy.whenScaled")}},
		{"negative replicas", func(ss *appsv1.StatefulSet) { ss.Spec.Replicas = ptr.To[int32](-1) }, []wantErr{inv("spec.replicas")}},
		{"negative minReadySeconds", func(ss *appsv1.StatefulSet) { ss.Spec.MinReadySeconds = -1 }, []wantErr{inv("spec.minReadySeconds")}},
		{"negative ordinal", func(ss *appsv1.StatefulSet) { ss.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: -1} },
			[]wantErr{inv("spec.ordinals.start")}},
		{"no selector", func(ss *appsv1.StatefulSet) { ss.Spec.Selector = nil },
			[]wantErr{req("spec.selector"), inv("spec.template.metadata.labels")}},
		{"empty selector", func(ss *appsv1.StatefulSet) { ss.Spec.Selector = &metav1.LabelSelector{} }, []wantErr{inv("spec.selector")}},
		{"selector mismatch", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Labels["app"] = "db" }, []wantErr{inv("spec.template.metadata.labels")}},
		{"template labels checked twice", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Labels["bad key"] = "x" },
			[]wantErr{inv("spec.template.labels"), inv("spec.template.labels")}},
		{"restart never", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			[]wantErr{unsupp("spec.template.spec.restartPolicy")}},
		{"active deadline", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](1) },
			[]wantErr{forb("spec.template.spec.activeDeadlineSeconds")}},
		{"hostname ignored", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Spec.Hostname = "Not_A_Label" }, nil},
		{"mount of unknown volume", func(ss *appsv1.StatefulSet) { ss.Spec.VolumeClaimTemplates[0].Name = "other" },
			[]wantErr{{Type: "FieldValueNotFound", Field: "spec.template.spec.containers[0].volumeMounts[0].name"}}},
		{"claim without modes and size", func(ss *appsv1.StatefulSet) {
			ss.Spec.VolumeClaimTemplates[0].Spec = corev1.PersistentVolumeClaimSpec{}
		}, []wantErr{req("spec.volumeClaimTemplates[0].spec.accessModes"), req("spec.volumeClaimTemplates[0].spec.resources[storage]")}},
		{"claim bad modes", func(ss *appsv1.StatefulSet) {
			ss.Spec.VolumeClaimTemplates[0].Spec.AccessModes = []corev1.PersistentVolumeAccessMode{"ReadWriteAll", corev1.ReadWriteOncePod, corev1.ReadOnlyMany}
		}, []wantErr{unsupp("spec.volumeClaimTemplates[0].spec.accessModes"), forb("spec.volumeClaimTemplates[0].spec.accessModes")}},
		{"claim zero size", func(ss *appsv1.StatefulSet) {
			ss.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("0")
		}, []wantErr{inv("spec.volumeClaimTemplates[0].spec.resources[storage]")}},
		{"claim bad class and mode", func(ss *appsv1.StatefulSet) {
			ss.Spec.VolumeClaimTemplates[0].Spec.StorageClassName = ptr.To("Fast_SSD")
			ss.Spec.VolumeClaimTemplates[0].Spec.VolumeMode = ptr.To[corev1.PersistentVolumeMode]("Tape")
		}, []wantErr{inv("spec.volumeClaimTemplates[0].spec.storageClassName"), unsupp("spec.volumeClaimTemplates[0].spec.volumeMode")}},
		{"claim data source", func(ss *appsv1.StatefulSet) {
			ss.Spec.VolumeClaimTemplates[0].Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "Snapshot"}
		}, []wantErr{req("spec.volumeClaimTemplates[0].spec.dataSource.name"), inv("spec.volumeClaimTemplates[0].spec.dataSource")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss := newStatefulSet()
			tt.mutate(ss)
			checkErrs(t, StatefulSetStrategy{}.Validate(ctx, ss), tt.want...)
		})
	}
	ss := newStatefulSet()
	ss.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RecreateStatefulSetStrategyType}
	checkErrs(t, StatefulSetStrategy{RecreateStrategy: true}.Validate(ctx, ss))
	ss.Spec.UpdateStrategy.Type = "Blue"
	checkDetail(t, StatefulSetStrategy{RecreateStrategy: true}.Validate(ctx, ss), "spec.updateStrategy", "must be 'RollingUpdate', 'OnDelete', or 'Recreate'")
}

func TestValidateStatefulSetUpdate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*appsv1.StatefulSet)
		want   []wantErr
	}{
		{"replicas", func(ss *appsv1.StatefulSet) { ss.Spec.Replicas = ptr.To[int32](5) }, nil},
		{"template", func(ss *appsv1.StatefulSet) { ss.Spec.Template.Spec.Containers[0].Image = "registry.example/web:2" }, nil},
		{"update strategy", func(ss *appsv1.StatefulSet) {
			ss.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
		}, nil},
		{"minReadySeconds", func(ss *appsv1.StatefulSet) { ss.Spec.MinReadySeconds = 10 }, nil},
		{"retention", func(ss *appsv1.StatefulSet) {
			ss.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted = appsv1.DeletePersistentVolumeClaimRetentionPolicyType
		}, nil},
		{"ordinals", func(ss *appsv1.StatefulSet) { ss.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: 3} }, nil},
		{"service name", func(ss *appsv1.StatefulSet) { ss.Spec.ServiceName = "other" }, []wantErr{inv("spec.serviceName")}},
		{"pod management", func(ss *appsv1.StatefulSet) { ss.Spec.PodManagementPolicy = appsv1.ParallelPodManagement },
			[]wantErr{inv("spec.podManagementPolicy")}},
		{"claim templates", func(ss *appsv1.StatefulSet) { ss.Spec.VolumeClaimTemplates[0].Spec.AccessModes = nil },
			[]wantErr{inv("spec.volumeClaimTemplates")}},
		{"selector", func(ss *appsv1.StatefulSet) {
			ss.Spec.Selector.MatchLabels["x"] = "y"
			ss.Spec.Template.Labels["x"] = "y"
		},
			[]wantErr{inv("spec.selector")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ss := newStatefulSet()
			tt.mutate(ss)
			checkErrs(t, StatefulSetStrategy{}.ValidateUpdate(ctx, ss, newStatefulSet()), tt.want...)
		})
	}

	// What older servers accepted stays acceptable while unchanged.
	old := newStatefulSet()
	old.Spec.ServiceName = "db.svc"
	old.Spec.VolumeClaimTemplates[0].Spec.AccessModes = nil
	old.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.RecreateStatefulSetStrategyType}
	ss := old.DeepCopy()
	ss.Spec.Replicas = ptr.To[int32](3)
	checkErrs(t, StatefulSetStrategy{}.ValidateUpdate(ctx, ss, old))
	// An old pod template that fails today's rules is not validated again.
	old.Spec.Template.Spec.Containers[0].Image = ""
	ss = old.DeepCopy()
	ss.Spec.Template.Labels["tier"] = "db"
	checkErrs(t, StatefulSetStrategy{}.ValidateUpdate(ctx, ss, old))
	// A valid old spec gets its new template validated.
	ss = newStatefulSet()
	ss.Spec.Template.Spec.Containers[0].Image = ""
	checkErrs(t, StatefulSetStrategy{}.ValidateUpdate(ctx, ss, newStatefulSet()), req("spec.template.spec.containers[0].image"))
}

func TestStatefulSetPrepareAndStatus(t *testing.T) {
	s := StatefulSetStrategy{}
	ss := newStatefulSet()
	ss.Generation, ss.Status.Replicas = 3, 2
	s.PrepareForCreate(ctx, ss)
	if ss.Generation != 1 || ss.Status.Replicas != 0 {
		t.Errorf("after create: %d %+v", ss.Generation, ss.Status)
	}
	old := newStatefulSet()
	old.Generation, old.Status.Replicas, old.Status.CollisionCount = 2, 1, ptr.To[int32](1)
	ss = old.DeepCopy()
	ss.Status.Replicas = 5
	ss.Spec.Replicas = ptr.To[int32](3)
	s.PrepareForUpdate(ctx, ss, old)
	if ss.Generation != 3 || ss.Status.Replicas != 1 {
		t.Errorf("after update: %d %+v", ss.Generation, ss.Status)
	}

	st := StatefulSetStatusStrategy{}
	ss = old.DeepCopy()
	ss.Spec.Replicas = ptr.To[int32](9)
	ss.Status = appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 1, CollisionCount: ptr.To[int32](1)}
	st.PrepareForUpdate(ctx, ss, old)
	if *ss.Spec.Replicas != 1 || ss.Status.Replicas != 2 {
		t.Errorf("status update: spec %d status %+v", *ss.Spec.Replicas, ss.Status)
	}
	checkErrs(t, st.ValidateUpdate(ctx, ss, old))
	ss.Status = appsv1.StatefulSetStatus{Replicas: 1, ReadyReplicas: 1, CurrentReplicas: 2, UpdatedReplicas: 2, AvailableReplicas: 2, ObservedGeneration: -1}
	checkErrs(t, st.ValidateUpdate(ctx, ss, old), inv("status.observedGeneration"), inv("status.currentReplicas"),
		inv("status.updatedReplicas"), inv("status.availableReplicas"), inv("status.availableReplicas"), inv("status.collisionCount"))
}

func TestStatefulSetNameAndWarnings(t *testing.T) {
	if msgs := (StatefulSetStrategy{}).ValidateName("db.v1", false); len(msgs) == 0 {
		t.Error("a DNS subdomain that is not a label was accepted")
	}
	ss := newStatefulSet()
	if w := (StatefulSetStrategy{}).WarningsOnCreate(ctx, ss); len(w) != 0 {
		t.Errorf("warnings = %v", w)
	}
	ss.Spec.RevisionHistoryLimit = ptr.To[int32](-1)
	if w := (StatefulSetStrategy{}).WarningsOnUpdate(ctx, ss, ss); len(w) != 1 {
		t.Errorf("warnings = %v", w)
	}
}
