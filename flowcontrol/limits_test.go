package flowcontrol

import (
	"math"
	"testing"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/capstan-io/capstan/apis/flowcontrol/bootstrap"
	"github.com/capstan-io/capstan/flowcontrol/fairqueuing"
)

func i32(i int32) *int32 { return &i }

// TestLevelLimitsOfBootstrap: the suggested configuration on a server of
// 600 seats gives kube's limits (as its
// apiserver_flowcontrol_nominal_limit_seats metric reports them).
func TestLevelLimitsOfBootstrap(t *testing.T) {
	pls := append(bootstrap.MandatoryPriorityLevelConfigurations(), bootstrap.SuggestedPriorityLevelConfigurations()...)
	var sum float64
	for _, pl := range pls {
		s, _, _ := specShares(&pl.Spec)
		sum += float64(s)
	}
	want := map[string]limits{
		"exempt":          {nominal: 0, min: 0, max: 600},
		"catch-all":       {nominal: 13, min: 13, max: 613},
		"system":          {nominal: 74, lendable: 24, min: 50, max: 674},
		"node-high":       {nominal: 98, lendable: 25, min: 73, max: 698},
		"leader-election": {nominal: 25, min: 25, max: 625},
		"workload-high":   {nominal: 98, lendable: 49, min: 49, max: 698},
		"workload-low":    {nominal: 245, lendable: 221, min: 24, max: 845},
		"global-default":  {nominal: 49, lendable: 25, min: 24, max: 649},
	}
	for _, pl := range pls {
		got := levelLimits(600, &pl.Spec, sum)
		if got != want[pl.Name] {
			t.Errorf("%s: %+v, want %+v", pl.Name, got, want[pl.Name])
		}
	}
}

func TestLevelLimits(t *testing.T) {
	for _, tc := range []struct {
		name     string
		spec     flowcontrolv1.PriorityLevelConfigurationSpec
		server   int
		shareSum float64
		want     limits
	}{
		{"default shares are 30", flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{}},
			100, 60, limits{nominal: 50, min: 50, max: 150}},
		{"rounded up", flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: i32(1)}},
			10, 245, limits{nominal: 1, min: 1, max: 11}},
		{"borrowing limit", flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
			NominalConcurrencyShares: i32(10), LendablePercent: i32(50), BorrowingLimitPercent: i32(0)}},
			20, 20, limits{nominal: 10, lendable: 5, min: 5, max: 10}},
		{"zero shares", flowcontrolv1.PriorityLevelConfigurationSpec{Type: "Limited", Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{NominalConcurrencyShares: i32(0)}},
			20, 20, limits{nominal: 0, min: 0, max: 20}},
	} {
		if got := levelLimits(tc.server, &tc.spec, tc.shareSum); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestMaxSeats(t *testing.T) {
	for _, tc := range []struct {
		nominal  int
		handSize int32
		want     int
	}{
		{49, 6, 8}, {245, 6, 37}, {13, 0, 0}, {1, 6, 1}, {10, 1, 2}, {100, 8, 12},
	} {
		if got := maxSeats(tc.nominal, tc.handSize); got != tc.want {
			t.Errorf("maxSeats(%d, %d) = %d, want %d", tc.nominal, tc.handSize, got, tc.want)
		}
	}
}

// TestRebalance: idle levels lend what they may to a busy one.
func TestRebalance(t *testing.T) {
	busy := &borrowLevel{limits: limits{nominal: 10, lendable: 5, min: 5, max: 30}}
	idle := &borrowLevel{limits: limits{nominal: 10, lendable: 5, min: 5, max: 30}}
	fixed := &borrowLevel{limits: limits{nominal: 10, min: 10, max: 10}}
	exempt := &borrowLevel{exempt: true}
	busy.demand.update(fairqueuing.Demand{Average: 20, Max: 25, Seconds: 10})
	busy.demand.smoothed = 25
	idle.demand.update(fairqueuing.Demand{Seconds: 10})
	fixed.demand.update(fairqueuing.Demand{Average: 1, Max: 1, Seconds: 10})
	rebalance(30, []*borrowLevel{busy, idle, fixed, exempt})
	if busy.current != 15 || idle.current != 5 || fixed.current != 10 || exempt.current != 0 {
		t.Fatalf("current limits busy %d idle %d fixed %d exempt %d", busy.current, idle.current, fixed.current, exempt.current)
	}
	if got := busy.current + idle.current + fixed.current; got != 30 {
		t.Fatalf("the limits add up to %d", got)
	}
	// An exempt level that used seats takes them from the others: what
	// is left above their minimums is shared in proportion to what they
	// used (at most their nominal limits), and past that they get their
	// minimums.
	for _, tc := range []struct{ exempt, busy int }{{8, 7}, {12, 5}} {
		exempt.demand.update(fairqueuing.Demand{Max: float64(tc.exempt), Seconds: 10})
		rebalance(30, []*borrowLevel{busy, idle, fixed, exempt})
		if busy.current != tc.busy || idle.current != 5 || fixed.current != 10 || exempt.current != tc.exempt {
			t.Fatalf("after exempt use of %d: busy %d idle %d fixed %d exempt %d", tc.exempt, busy.current, idle.current, fixed.current, exempt.current)
		}
	}
}

func TestAllocate(t *testing.T) {
	for _, tc := range []struct {
		total float64
		items []borrowItem
		want  []float64
		fair  float64 // the fair fraction kube's allocation reports
	}{
		{10, []borrowItem{{0, 10, 1}, {0, 10, 1}}, []float64{5, 5}, 5},
		{10, []borrowItem{{0, 10, 3}, {0, 10, 1}}, []float64{7.5, 2.5}, 2.5},
		{10, []borrowItem{{0, 4, 3}, {0, 10, 1}}, []float64{4, 6}, 6},
		{10, []borrowItem{{6, 10, 1}, {0, 10, 1}}, []float64{6, 4}, 4},
		{5, []borrowItem{{0, 2, 1}, {0, 3, 1}}, []float64{2, 3}, 3},
		{10, []borrowItem{{0, 2, 1}, {0, 3, 1}}, []float64{2, 3}, 0},
		{4, []borrowItem{{1, 5, 2}, {3, 5, 4}}, []float64{1, 3}, 0.5},
	} {
		got, fair := allocate(tc.total, tc.items)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-6 {
				t.Errorf("allocate(%v, %v) = %v, want %v", tc.total, tc.items, got, tc.want)
				break
			}
		}
		if math.Abs(fair-tc.fair) > 1e-6 {
			t.Errorf("allocate(%v, %v): fair fraction %v, want %v", tc.total, tc.items, fair, tc.fair)
		}
	}
}
