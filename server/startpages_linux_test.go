package server

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"testing"
)

func TestReadOnlyMappings(t *testing.T) {
	maps := []byte(`00400000-02a8e000 r-xp 00000000 fe:00 10223924                           /usr/bin/capstan
02a8e000-0580f000 r--p 0268e000 fe:00 10223924                           /usr/bin/capstan
0580f000-058eb000 rw-p 0540f000 fe:00 10223924                           /usr/bin/capstan
058eb000-05900000 rw-p 00000000 00:00 0
7f1b4cbba000-7f1b4cd10000 r-xp 00026000 fe:00 326269                     /usr/lib/x86_64-linux-gnu/libc.so.6
7ffd1000-7ffd2000 r--p 00000000 00:00 0                                  [vvar]
`)
	got := readOnlyMappings(maps, "/usr/bin/capstan")
	want := []addrRange{{0x400000, 0x2a8e000}, {0x2a8e000, 0x580f000}}
	if !slices.Equal(got, want) {
		t.Fatalf("readOnlyMappings = %x, want %x (code and read-only data, not the writable data or other files)", got, want)
	}
}

// residentKB sums the Rss of the executable's read-only mappings.
func residentKB(t *testing.T) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	total, ours := 0, false
	for line := range bytes.Lines(smaps) {
		f := bytes.Fields(line)
		switch {
		case len(f) >= 5 && bytes.Contains(f[0], []byte("-")): // a mapping's first line
			ours = len(f) == 6 && string(f[5]) == exe && f[1][1] == '-'
		case ours && len(f) >= 2 && string(f[0]) == "Rss:":
			kb, _ := strconv.Atoi(string(f[1]))
			total += kb
		}
	}
	return total
}

// The pages of the executable the process touched leave its resident set.
func TestReleaseStartPages(t *testing.T) {
	before := residentKB(t)
	if before == 0 {
		t.Skip("no resident pages of the executable to release")
	}
	releaseStartPages()
	after := residentKB(t)
	t.Logf("executable's read-only pages resident: %d kB -> %d kB", before, after)
	if after >= before/2 {
		t.Fatalf("executable's read-only pages resident: %d kB -> %d kB, want less than half left", before, after)
	}
}
