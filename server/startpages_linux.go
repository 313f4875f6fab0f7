package server

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// madvPageout is Linux's MADV_PAGEOUT (5.4 and later; older kernels answer
// EINVAL, and nothing is released).
const madvPageout = 21

// releaseStartPages gives back the pages of the executable's code and
// read-only data that only the start used. Package init, the bootstrap
// and the first informers run most of a binary that is mostly
// Kubernetes' generated code (types, conversions, protobuf, OpenAPI), and
// the kernel maps each page touched with its neighbours: an idle server
// kept ~65 MB of the file resident, two thirds of its RSS, against ~20 MB
// that it touches again when idle. The kernel pages the rest out (only
// pages no other process maps); a page needed later is read back in.
func releaseStartPages() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, r := range readOnlyMappings(maps, exe) {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, madvPageout)
	}
}

type addrRange struct{ start, end uintptr }

// readOnlyMappings parses /proc/self/maps: the ranges mapped from path
// that the process cannot write.
func readOnlyMappings(maps []byte, path string) []addrRange {
	var out []addrRange
	for line := range bytes.Lines(maps) {
		// start-end perms offset dev inode path
		f := bytes.Fields(line)
		if len(f) != 6 || string(f[5]) != path || len(f[1]) < 2 || f[1][1] != '-' {
			continue
		}
		start, end, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(string(start), 16, 64)
		e, err2 := strconv.ParseUint(string(end), 16, 64)
		if err1 != nil || err2 != nil || e <= s {
			continue
		}
		out = append(out, addrRange{uintptr(s), uintptr(e)})
	}
	return out
}
