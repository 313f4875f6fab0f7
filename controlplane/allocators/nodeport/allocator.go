// Package nodeport allocates the node ports of services from a bitmap kept
// in storage exactly as kube keeps it: a core/v1 RangeAllocation at
// /registry/ranges/servicenodeports whose range is "30000-32767" and whose
// data are the big-endian bytes of a big integer, bit i standing for port
// base+i. Every change is an optimistic-concurrency update of that object,
// so servers sharing storage share the bitmap. The repair loop creates it.
package nodeport

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/capstan-io/capstan/apis/core"
	"github.com/capstan-io/capstan/metrics"
	"github.com/capstan-io/capstan/storage"
)

// Key is the storage key of the bitmap, below the storage prefix.
const Key = "/ranges/servicenodeports"

var (
	// ErrFull: no port is left.
	ErrFull = errors.New("range is full")
	// ErrAllocated: the requested port belongs to someone else.
	ErrAllocated = errors.New("provided port is already allocated")
	// errNotInitialized: the repair loop has not written the bitmap yet.
	errNotInitialized  = errors.New("cannot allocate resources of type servicenodeportallocations at this time")
	errUnchanged       = errors.New("unchanged")
	errMismatchedRange = errors.New("the provided range does not match the current range")
)

// ErrNotInRange: the requested port is outside the range.
type ErrNotInRange struct{ ValidPorts string }

func (e *ErrNotInRange) Error() string {
	return fmt.Sprintf("provided port is not in the valid range. The range of valid ports is %s", e.ValidPorts)
}

// Allocator is a core.NodePortAllocator over the stored bitmap.
type Allocator struct {
	storage storage.Interface
	ports   utilnet.PortRange
	lower   int // ports in the lower band, left to static requests first
}

var _ core.NodePortAllocator = (*Allocator)(nil)

// New returns the allocator of ports over st, whose resource prefix is Key.
func New(st storage.Interface, ports utilnet.PortRange) *Allocator {
	return &Allocator{storage: st, ports: ports, lower: lowerBand(ports.Size)}
}

// lowerBand is kube's min(max(16, size/32), 128), and 0 for ranges of 16
// ports or fewer.
func lowerBand(size int) int {
	if size <= 16 {
		return 0
	}
	return min(max(size/32, 16), 128)
}

// Range is the range ports are allocated from.
func (a *Allocator) Range() utilnet.PortRange { return a.ports }

// Allocate reserves port.
func (a *Allocator) Allocate(ctx context.Context, port int) error {
	if !a.ports.Contains(port) {
		metrics.NodePortAllocation("static", ErrAllocated)
		return &ErrNotInRange{ValidPorts: a.ports.String()}
	}
	err := a.update(ctx, func(bits *big.Int) error {
		if bits.Bit(port-a.ports.Base) == 1 {
			return ErrAllocated
		}
		bits.SetBit(bits, port-a.ports.Base, 1)
		return nil
	})
	metrics.NodePortAllocation("static", err)
	return err
}

// AllocateNext reserves a free port: from a random place in the upper
// band, then in the lower band.
func (a *Allocator) AllocateNext(ctx context.Context) (int, error) {
	var port int
	err := a.update(ctx, func(bits *big.Int) error {
		offset, ok := a.free(bits)
		if !ok {
			return ErrFull
		}
		bits.SetBit(bits, offset, 1)
		port = a.ports.Base + offset
		return nil
	})
	metrics.NodePortAllocation("dynamic", err)
	return port, err
}

// free finds a clear bit, upper band first.
func (a *Allocator) free(bits *big.Int) (int, bool) {
	size := a.ports.Size
	bands := [][2]int{{a.lower, size}, {0, a.lower}}
	for _, b := range bands {
		n := b[1] - b[0]
		if n <= 0 {
			continue
		}
		start := rand.IntN(n)
		for i := range n {
			if at := b[0] + (start+i)%n; bits.Bit(at) == 0 {
				return at, true
			}
		}
	}
	return 0, false
}

// Release frees port; a free or out-of-range port is no error.
func (a *Allocator) Release(ctx context.Context, port int) error {
	if !a.ports.Contains(port) {
		return nil
	}
	err := a.update(ctx, func(bits *big.Int) error {
		if bits.Bit(port-a.ports.Base) == 0 {
			return errUnchanged
		}
		bits.SetBit(bits, port-a.ports.Base, 0)
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

// Has reports whether port is allocated.
func (a *Allocator) Has(ctx context.Context, port int) (bool, error) {
	if !a.ports.Contains(port) {
		return false, nil
	}
	ra := &corev1.RangeAllocation{}
	if err := a.storage.Get(ctx, Key, storage.GetOptions{IgnoreNotFound: true}, ra); err != nil {
		return false, err
	}
	if ra.ResourceVersion == "" {
		return false, nil
	}
	bits, err := bitmapOf(ra, a.ports)
	if err != nil {
		return false, err
	}
	return bits.Bit(port-a.ports.Base) == 1, nil
}

// update changes the stored bitmap with fn, retrying on conflicts, and
// sets the usage gauges from what it wrote.
func (a *Allocator) update(ctx context.Context, fn func(bits *big.Int) error) error {
	allocated := 0
	try := func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		if res.ResourceVersion == 0 {
			return nil, nil, errNotInitialized
		}
		ra := in.(*corev1.RangeAllocation)
		bits, err := bitmapOf(ra, a.ports)
		if err != nil {
			return nil, nil, err
		}
		if err := fn(bits); err != nil {
			return nil, nil, err
		}
		ra.Range, ra.Data = a.ports.String(), bits.Bytes()
		allocated = popCount(bits)
		return ra, nil, nil
	}
	err := a.storage.GuaranteedUpdate(ctx, Key, &corev1.RangeAllocation{}, true, nil, try, nil)
	if err == nil {
		metrics.NodePortUsage(allocated, a.ports.Size-allocated)
	}
	return err
}

// bitmapOf reads the bitmap of ra. One of another range (the flag changed
// and the repair loop has not rewritten it yet) cannot be used.
func bitmapOf(ra *corev1.RangeAllocation, ports utilnet.PortRange) (*big.Int, error) {
	if ra.Range != ports.String() {
		return nil, errMismatchedRange
	}
	return new(big.Int).SetBytes(ra.Data), nil
}
