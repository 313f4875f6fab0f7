package authn

import (
	"encoding/base64"
	"slices"
	"testing"
)

func TestProtocolToken(t *testing.T) {
	tok := "base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte("secret"))
	for _, c := range []struct {
		name    string
		headers []string
		token   string
		others  []string
		err     string
	}{
		{name: "none", headers: []string{"v5.channel.k8s.io"}, others: []string{"v5.channel.k8s.io"}},
		{name: "token and another", headers: []string{tok + ", v5.channel.k8s.io"}, token: "secret", others: []string{"v5.channel.k8s.io"}},
		{name: "two headers", headers: []string{"a", tok}, token: "secret", others: []string{"a"}},
		{name: "only the token", headers: []string{tok}, err: "missing additional subprotocol"},
		{name: "twice", headers: []string{tok + "," + tok + ",a"}, err: "multiple base64.bearer.authorization tokens specified"},
		{name: "bad base64", headers: []string{"base64url.bearer.authorization.k8s.io.!!,a"}, err: "invalid base64.bearer.authorization token encoding"},
		{name: "not utf-8", headers: []string{"base64url.bearer.authorization.k8s.io." + base64.RawURLEncoding.EncodeToString([]byte{0xff}) + ",a"},
			err: "invalid base64.bearer.authorization token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			token, others, err := protocolToken(c.headers)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err %v, want %s", err, c.err)
				}
				return
			}
			if err != nil || token != c.token || !slices.Equal(others, c.others) {
				t.Errorf("got %q %q %v, want %q %q", token, others, err, c.token, c.others)
			}
		})
	}
}
