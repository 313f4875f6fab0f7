package flowcontrol

import (
	"math"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"

	"github.com/capstan-io/capstan/flowcontrol/fairqueuing"
)

// Borrowing parameters, kube's.
const (
	// maxSeatsFraction of a level's nominal limit is the widest a request
	// may be estimated at.
	maxSeatsFraction = 0.15
	// demandSmoothing is how much of the previous smoothed seat demand a
	// period keeps.
	demandSmoothing = 0.977
)

// limits are a level's concurrency limits in seats: nominal is its share
// of the server's, min what it keeps when lending all it may, max what
// it may reach by borrowing.
type limits struct {
	nominal, min, max int
	lendable          int
}

// levelLimits computes a level's limits as kube does: its share of the
// server's limit by nominalConcurrencyShares, rounded up; lendablePercent
// and borrowingLimitPercent of it, rounded (no borrowing limit: up to the
// whole server's).
func levelLimits(serverLimit int, spec *flowcontrolv1.PriorityLevelConfigurationSpec, shareSum float64) limits {
	shares, lendablePct, borrowPct := specShares(spec)
	var nominal int
	if shareSum > 0 {
		nominal = int(math.Ceil(float64(serverLimit) * float64(shares) / shareSum))
	}
	var l limits
	l.nominal = nominal
	if lendablePct != nil {
		l.lendable = int(math.Round(float64(nominal) * float64(*lendablePct) / 100))
	}
	borrowing := serverLimit
	if borrowPct != nil {
		borrowing = int(math.Round(float64(nominal) * float64(*borrowPct) / 100))
	}
	l.min, l.max = nominal-l.lendable, nominal+borrowing
	return l
}

// specShares reads nominalConcurrencyShares and the lending percentages
// of either kind of level (kube's defaults: 30 shares when unset).
func specShares(spec *flowcontrolv1.PriorityLevelConfigurationSpec) (shares int32, lendable, borrowing *int32) {
	switch {
	case spec.Limited != nil:
		l := spec.Limited
		shares = 30
		if l.NominalConcurrencyShares != nil {
			shares = *l.NominalConcurrencyShares
		}
		return shares, l.LendablePercent, l.BorrowingLimitPercent
	case spec.Exempt != nil:
		if spec.Exempt.NominalConcurrencyShares != nil {
			shares = *spec.Exempt.NominalConcurrencyShares
		}
		return shares, spec.Exempt.LendablePercent, nil
	}
	return 0, nil, nil
}

// maxSeats is the widest a request of a queuing level is estimated at:
// 15% of its nominal limit, at most its limit divided by its hand size,
// at least 1.
func maxSeats(nominal int, handSize int32) int {
	if handSize <= 0 {
		return 0 // not queuing: only the global maximum applies
	}
	return int(math.Max(1, math.Min(math.Ceil(float64(nominal)*maxSeatsFraction), float64(int32(nominal)/handSize))))
}

// demandStats are a level's seat demand statistics across periods.
type demandStats struct {
	highWatermark int
	smoothed      float64
}

func (s *demandStats) update(d fairqueuing.Demand) {
	s.highWatermark = int(math.Round(d.Max))
	if d.Seconds <= 0 {
		return
	}
	envelope := d.Average + d.StdDev
	s.smoothed = math.Max(envelope, demandSmoothing*s.smoothed+(1-demandSmoothing)*envelope)
}

// borrowItem is one non-exempt level in the allocation problem.
type borrowItem struct {
	lower, upper, target float64
}

// allocate shares total seats among items: each gets its target times a
// common factor, clamped to its bounds, with the factor chosen so that
// the allocations add up to total. Kube solves the same problem exactly
// by walking the bounds; bisection finds the same factor, which is
// returned too. When the bounds leave no room the factor is kube's: the
// least lower bound relative to its target when the lower bounds add up
// to total, the greatest upper bound relative to its target when the
// upper bounds do, and 0 when even they fall short.
func allocate(total float64, items []borrowItem) ([]float64, float64) {
	var lowSum, highSum float64
	lowest, highest := math.Inf(1), 0.0
	for _, it := range items {
		t := max(it.target, 0.001)
		lowSum, highSum = lowSum+it.lower, highSum+it.upper
		lowest, highest = math.Min(lowest, it.lower/t), math.Max(highest, it.upper/t)
	}
	sum := func(p float64) (s float64) {
		for _, it := range items {
			s += clamp(max(it.target, 0.001)*p, it.lower, it.upper)
		}
		return s
	}
	lo, hi := 0.0, 1.0
	for sum(hi) < total && hi < 1e12 {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if sum(mid) < total {
			lo = mid
		} else {
			hi = mid
		}
	}
	out := make([]float64, len(items))
	for i, it := range items {
		out[i] = clamp(max(it.target, 0.001)*hi, it.lower, it.upper)
	}
	const epsilon = 1e-9
	switch {
	case highSum < total-epsilon:
		return out, 0
	case highSum <= total+epsilon:
		return out, highest
	case lowSum >= total-epsilon:
		return out, lowest
	}
	return out, hi
}

func clamp(x, lo, hi float64) float64 { return math.Min(math.Max(x, lo), hi) }

// borrowLevel is what the borrowing computation reads and sets of a level.
type borrowLevel struct {
	exempt  bool
	limits  limits
	demand  demandStats
	current int     // the result: the level's current concurrency limit
	target  float64 // the seats the allocation aimed at for the level
}

// rebalance sets each level's current limit from the period's demand, as
// kube's periodic borrowing does: exempt levels take what they used
// (at least their minimum); the other levels share the rest in
// proportion to their smoothed demand, within [their minimum or the
// demand they had, up to nominal] and their maximum. It returns the fair
// fraction: the factor the targets were scaled by, 0 when the levels got
// their minimum or a share of it.
func rebalance(nominalSum int, levels []*borrowLevel) (fairFrac float64) {
	remaining := nominalSum
	var items []borrowItem
	var limited []*borrowLevel
	var minSum, minCurrentSum int
	for _, l := range levels {
		if l.exempt {
			l.current = max(l.limits.min, l.demand.highWatermark)
			l.target = float64(l.current)
			remaining -= l.current
			continue
		}
		minCurrent := max(l.limits.min, min(l.limits.nominal, l.demand.highWatermark))
		l.target = math.Max(float64(minCurrent), l.demand.smoothed)
		items = append(items, borrowItem{lower: float64(minCurrent), upper: float64(l.limits.max), target: l.target})
		limited = append(limited, l)
		minSum += l.limits.min
		minCurrentSum += minCurrent
	}
	switch {
	case len(limited) == 0:
	case remaining <= minSum:
		for _, l := range limited {
			l.current = l.limits.min
		}
	case remaining <= minCurrentSum:
		frac := float64(remaining-minSum) / float64(minCurrentSum-minSum)
		for i, l := range limited {
			l.current = l.limits.min + int(math.Round((items[i].lower-float64(l.limits.min))*frac))
		}
	default:
		// kube divides the nominal sum, not what exempt levels left.
		var allocs []float64
		allocs, fairFrac = allocate(float64(nominalSum), items)
		for i, a := range allocs {
			limited[i].current = int(math.Round(a))
		}
	}
	return fairFrac
}
