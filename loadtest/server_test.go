package loadtest

import (
	"slices"
	"testing"
)

func TestExpandRun(t *testing.T) {
	got := expandRun([]string{"--data-dir=/tmp/d{run}", "--etcd-prefix=/p/{run}/{run}", "plain"}, 3)
	want := []string{"--data-dir=/tmp/d3", "--etcd-prefix=/p/3/3", "plain"}
	if !slices.Equal(got, want) {
		t.Errorf("expandRun = %v, want %v", got, want)
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, ok := range []string{"https://127.0.0.1:6443", "https://localhost:1/readyz", "https://[::1]:6443", "127.0.0.2:80"} {
		if err := CheckLoopback(ok); err != nil {
			t.Errorf("CheckLoopback(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"https://10.0.0.1:6443", "https://example.com", "https://0.0.0.0:6443"} {
		if err := CheckLoopback(bad); err == nil {
			t.Errorf("CheckLoopback(%q) succeeded", bad)
		}
	}
}
