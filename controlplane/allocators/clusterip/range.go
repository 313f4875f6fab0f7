package clusterip

import (
	"encoding/binary"
	"math"
	"net/netip"
)

// ipRange is the allocatable part of a service CIDR: every address but the
// network address and, for IPv4, the broadcast address. As in kube
// (KEP-3070), its first addresses form a lower band that dynamic
// allocation uses only when the upper band is full, leaving them to
// static assignments.
type ipRange struct {
	prefix netip.Prefix
	first  netip.Addr // the first allocatable address
	last   netip.Addr // the last allocatable address
	size   uint64     // allocatable addresses, capped at MaxUint64
	lower  uint64     // addresses in the lower band
}

// newRange returns the range of a CIDR; ok is false when it holds no
// allocatable address or, as kube refuses them, is an IPv6 CIDR shorter
// than /64.
func newRange(p netip.Prefix) (ipRange, bool) {
	p = p.Masked()
	hostBits := p.Addr().BitLen() - p.Bits()
	if !p.IsValid() || hostBits > 64 {
		return ipRange{}, false
	}
	r := ipRange{prefix: p, first: p.Addr().Next()}
	last := broadcast(p)
	if p.Addr().Is4() {
		last = last.Prev()
	}
	r.last = last
	reserved := uint64(1) // the network address
	if p.Addr().Is4() {
		reserved = 2 // and the broadcast address
	}
	switch total := uint64(1) << hostBits; {
	case hostBits >= 64:
		r.size = math.MaxUint64
	case total <= reserved:
		return ipRange{}, false
	default:
		r.size = total - reserved
	}
	if last.Less(r.first) {
		return ipRange{}, false
	}
	r.lower = lowerBand(hostBits)
	return r, true
}

// lowerBand is kube's min(max(16, size/16), 256), and 0 for ranges of 16
// addresses or fewer.
func lowerBand(hostBits int) uint64 {
	if hostBits <= 4 {
		return 0
	}
	if hostBits >= 63 {
		return 256
	}
	return min(max(uint64(1)<<hostBits/16, 16), 256)
}

// contains reports whether a is allocatable in the range.
func (r ipRange) contains(a netip.Addr) bool {
	return a.Is4() == r.first.Is4() && !a.Less(r.first) && !r.last.Less(a)
}

// at is the address i places after the first one.
func (r ipRange) at(i uint64) netip.Addr { return addOffset(r.first, i) }

// broadcast is the last address of a prefix.
func broadcast(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().As16()
	hostBits := p.Addr().BitLen() - p.Bits()
	for i := 15; i >= 0 && hostBits > 0; i-- {
		n := min(hostBits, 8)
		b[i] |= byte(1<<n - 1)
		hostBits -= n
	}
	a := netip.AddrFrom16(b)
	if p.Addr().Is4() {
		return a.Unmap()
	}
	return a
}

// addOffset adds off to a, wrapping around its address space.
func addOffset(a netip.Addr, off uint64) netip.Addr {
	b := a.As16()
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	sum := lo + off
	if sum < lo {
		hi++
	}
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], sum)
	out := netip.AddrFrom16(b)
	if a.Is4() {
		return out.Unmap()
	}
	return out
}
