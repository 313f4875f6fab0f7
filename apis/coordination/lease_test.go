package coordination

import (
	"context"
	"slices"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func ptr[T any](v T) *T { return &v }

type wantErr struct {
	typ   field.ErrorType
	field string
}

func TestValidateLeaseSpec(t *testing.T) {
	oldest := coordinationv1.OldestEmulationVersion
	tests := []struct {
		name string
		spec coordinationv1.LeaseSpec
		want []wantErr
	}{
		{"empty", coordinationv1.LeaseSpec{}, nil},
		{"valid", coordinationv1.LeaseSpec{HolderIdentity: ptr("me"), LeaseDurationSeconds: ptr[int32](15), LeaseTransitions: ptr[int32](0)}, nil},
		{"zero duration", coordinationv1.LeaseSpec{LeaseDurationSeconds: ptr[int32](0)},
			[]wantErr{{field.ErrorTypeInvalid, "spec.leaseDurationSeconds"}}},
		{"negative transitions", coordinationv1.LeaseSpec{LeaseTransitions: ptr[int32](-1)},
			[]wantErr{{field.ErrorTypeInvalid, "spec.leaseTransitions"}}},
		{"known strategy", coordinationv1.LeaseSpec{Strategy: &oldest, PreferredHolder: ptr("a")}, nil},
		{"custom strategy", coordinationv1.LeaseSpec{Strategy: ptr[coordinationv1.CoordinatedLeaseStrategy]("example.com/mine")}, nil},
		{"unknown strategy", coordinationv1.LeaseSpec{Strategy: ptr[coordinationv1.CoordinatedLeaseStrategy]("Mine")},
			[]wantErr{{field.ErrorTypeNotSupported, "spec.strategy.strategy"}}},
		{"bad custom strategy", coordinationv1.LeaseSpec{Strategy: ptr[coordinationv1.CoordinatedLeaseStrategy]("example.com/-x")},
			[]wantErr{{field.ErrorTypeInvalid, "spec.strategy.strategy"}}},
		{"holder without strategy", coordinationv1.LeaseSpec{PreferredHolder: ptr("a")},
			[]wantErr{{field.ErrorTypeForbidden, "spec.preferredHolder"}}},
		{"empty holder without strategy", coordinationv1.LeaseSpec{PreferredHolder: ptr("")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lease := &coordinationv1.Lease{Spec: tt.spec}
			for _, errs := range []field.ErrorList{
				LeaseStrategy{}.Validate(context.Background(), lease),
				LeaseStrategy{}.ValidateUpdate(context.Background(), lease, &coordinationv1.Lease{}),
			} {
				var got []wantErr
				for _, e := range errs {
					got = append(got, wantErr{e.Type, e.Field})
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("errors = %v, want %v", errs, tt.want)
				}
			}
		})
	}
}

func TestLeasePrepare(t *testing.T) {
	oldest := coordinationv1.OldestEmulationVersion
	withFields := func() *coordinationv1.Lease {
		return &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{Strategy: &oldest, PreferredHolder: ptr("a")}}
	}
	ctx := context.Background()

	lease := withFields()
	LeaseStrategy{}.PrepareForCreate(ctx, lease)
	if lease.Spec.Strategy != nil || lease.Spec.PreferredHolder != nil {
		t.Errorf("gate off: create kept %+v", lease.Spec)
	}
	lease = withFields()
	LeaseStrategy{CoordinatedLeaderElection: true}.PrepareForCreate(ctx, lease)
	if lease.Spec.Strategy == nil || lease.Spec.PreferredHolder == nil {
		t.Errorf("gate on: create dropped %+v", lease.Spec)
	}

	lease = withFields()
	LeaseStrategy{}.PrepareForUpdate(ctx, lease, &coordinationv1.Lease{})
	if lease.Spec.Strategy != nil || lease.Spec.PreferredHolder != nil {
		t.Errorf("gate off: update kept new fields %+v", lease.Spec)
	}
	lease = withFields()
	LeaseStrategy{}.PrepareForUpdate(ctx, lease, withFields())
	if lease.Spec.Strategy == nil || lease.Spec.PreferredHolder == nil {
		t.Errorf("gate off: update dropped fields already in use %+v", lease.Spec)
	}
	if !(LeaseStrategy{}).AllowCreateOnUpdate() {
		t.Error("leases must allow create on update")
	}
}
