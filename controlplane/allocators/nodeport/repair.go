package nodeport

import (
	"context"
	"log/slog"
	"maps"
	"math/big"
	mathbits "math/bits"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/registry/rest"
	"github.com/capstan-io/capstan/storage"
)

// repairsBeforeLeakCleanup is how many repairs in a row must find a port
// allocated to no service before it is freed, as in kube: a port is
// allocated before its service is written.
const repairsBeforeLeakCleanup = 3

// Repair rebuilds the bitmap from the services, as kube's node port repair
// controller does. Its first run creates the bitmap (allocations fail
// until then); a changed --service-node-port-range is taken over by it.
type Repair struct {
	Allocator *Allocator
	Services  rest.Lister // all namespaces
	Logger    *slog.Logger

	mu    sync.Mutex  // guards leaks
	leaks map[int]int // per allocated port no service holds, the repairs left before it is freed
}

// RunOnce repairs once; a failure is counted in
// apiserver_nodeport_repair_reconcile_errors_total.
func (r *Repair) RunOnce(ctx context.Context) error {
	err := r.runOnce(ctx)
	if err != nil {
		metrics.NodePortReconcileError()
	}
	return err
}

func (r *Repair) runOnce(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.leaks == nil {
		r.leaks = map[int]int{}
	}
	list, err := r.Services.List(ctx, &rest.ListOptions{LabelSelector: labels.Everything()})
	if err != nil {
		return err
	}
	a := r.Allocator
	rebuilt := new(big.Int)
	for _, svc := range list.(*corev1.ServiceList).Items {
		for _, port := range servicePorts(&svc) {
			switch {
			case !a.ports.Contains(port):
				metrics.NodePortRepairError("outOfRange")
				r.Logger.Warn("node port is not within the port range; please recreate the service",
					"service", svc.Namespace+"/"+svc.Name, "port", port, "range", a.ports.String())
			case rebuilt.Bit(port-a.ports.Base) == 1:
				metrics.NodePortRepairError("duplicate")
				r.Logger.Warn("node port was assigned to multiple services; please recreate the service",
					"service", svc.Namespace+"/"+svc.Name, "port", port)
			default:
				rebuilt.SetBit(rebuilt, port-a.ports.Base, 1)
				delete(r.leaks, port)
			}
		}
	}
	// A conflicting write retries the update: the leak counts of the
	// retry start again from this run's.
	var leaks map[int]int
	var found repairFindings
	err = a.storage.GuaranteedUpdate(ctx, Key, &corev1.RangeAllocation{}, true, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			ra := in.(*corev1.RangeAllocation)
			bits := new(big.Int).Set(rebuilt)
			leaks = maps.Clone(r.leaks)
			found = repairFindings{unrecorded: a.unrecorded(ra, rebuilt)}
			found.cleaned = r.keepLeaks(ra, bits, leaks)
			found.allocated = popCount(bits)
			ra.Range, ra.Data = a.ports.String(), bits.Bytes()
			return ra, nil, nil
		}, nil)
	if err == nil {
		r.leaks = leaks
		found.record(a)
	}
	return err
}

// repairFindings are what a repair wrote, for the metrics: the ports held
// by services that the stored bitmap missed, the leaked ones it freed,
// and how many are allocated now.
type repairFindings struct {
	unrecorded, cleaned, allocated int
}

func (f repairFindings) record(a *Allocator) {
	for range f.unrecorded {
		metrics.NodePortRepairError("repair")
	}
	for range f.cleaned {
		metrics.NodePortRepairError("leak")
	}
	metrics.NodePortUsage(f.allocated, a.ports.Size-f.allocated)
}

// unrecorded counts the ports of held that the stored bitmap lacks; none
// when there is no bitmap of this range yet.
func (a *Allocator) unrecorded(stored *corev1.RangeAllocation, held *big.Int) int {
	if stored.ResourceVersion == "" || stored.Range != a.ports.String() {
		return 0
	}
	missing := new(big.Int).AndNot(held, new(big.Int).SetBytes(stored.Data))
	return popCount(missing)
}

// popCount is the number of set bits.
func popCount(bits *big.Int) int {
	n := 0
	for _, w := range bits.Bits() {
		n += mathbits.OnesCount(uint(w))
	}
	return n
}

// keepLeaks carries over the stored ports no service holds until they have
// been seen leaked repairsBeforeLeakCleanup times in a row, and returns how
// many it freed. The stored bitmap may be of another range: the flag
// changed.
func (r *Repair) keepLeaks(stored *corev1.RangeAllocation, bits *big.Int, leaks map[int]int) (cleaned int) {
	a := r.Allocator
	storedRange, err := utilnet.ParsePortRange(stored.Range)
	if err != nil || stored.ResourceVersion == "" {
		return 0
	}
	old := new(big.Int).SetBytes(stored.Data)
	for i := range old.BitLen() {
		port := storedRange.Base + i
		if old.Bit(i) == 0 || !a.ports.Contains(port) || bits.Bit(port-a.ports.Base) == 1 {
			continue
		}
		left, seen := leaks[port]
		if !seen {
			left = repairsBeforeLeakCleanup
		}
		if left--; left > 0 {
			leaks[port] = left
			bits.SetBit(bits, port-a.ports.Base, 1)
			continue
		}
		delete(leaks, port)
		cleaned++
		r.Logger.Warn("node port appears to have leaked: cleaning up", "port", port)
	}
	return cleaned
}

// servicePorts are the node ports a service holds: each node port once
// per protocol, and the health check node port.
func servicePorts(svc *corev1.Service) []int {
	var out []int
	seen := map[int32]sets.Set[corev1.Protocol]{}
	for _, p := range svc.Spec.Ports {
		if p.NodePort == 0 {
			continue
		}
		protos, ok := seen[p.NodePort]
		switch {
		case !ok:
			seen[p.NodePort] = sets.New(p.Protocol)
			out = append(out, int(p.NodePort))
		case protos.Has(p.Protocol):
			out = append(out, int(p.NodePort))
		default:
			protos.Insert(p.Protocol)
		}
	}
	if hc := svc.Spec.HealthCheckNodePort; hc != 0 {
		if protos, ok := seen[hc]; !ok || protos.Has(corev1.ProtocolTCP) {
			out = append(out, int(hc))
		}
	}
	return out
}
