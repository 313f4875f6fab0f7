package imagepolicy

import (
	"strings"
	"testing"
	"time"
)

func TestReadConfig(t *testing.T) {
	for _, tc := range []struct {
		data                 string
		allow, deny, backoff time.Duration
		defaultAllow         bool
		wantErr              string
	}{
		{data: "imagePolicy:\n  kubeConfigFile: k\n", allow: 5 * time.Minute, deny: 30 * time.Second, backoff: 500 * time.Millisecond},
		{data: "imagePolicy:\n  allowTTL: 50\n  denyTTL: -1\n  retryBackoff: 10\n  defaultAllow: true\n", allow: 50 * time.Second, backoff: 10 * time.Millisecond, defaultAllow: true},
		{data: "imagePolicy:\n  allowTTL: 3600\n", wantErr: "valid value is between 1s and 30m0s, got 1h0m0s"},
		{data: "", wantErr: "no config specified"},
	} {
		c, err := readConfig([]byte(tc.data))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: %v, want %q", tc.data, err, tc.wantErr)
			}
			continue
		}
		if err != nil || c.AllowTTL != tc.allow || c.DenyTTL != tc.deny || c.RetryBackoff != tc.backoff || c.DefaultAllow != tc.defaultAllow {
			t.Errorf("%q: %+v (%v)", tc.data, c, err)
		}
	}
}
