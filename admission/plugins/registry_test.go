package plugins

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/capstan-io/capstan/admission"
)

type named struct {
	name string
	log  *[]string
	cfg  []byte
}

func (n named) Admit(context.Context, *admission.Attributes) error {
	*n.log = append(*n.log, n.name+":"+string(n.cfg))
	return nil
}

func TestRegistryChain(t *testing.T) {
	var log []string
	r := NewRegistry()
	for _, n := range []string{"ResourceQuota", "AlwaysAdmit", "NamespaceLifecycle", "ServiceAccount"} {
		r.Register(n, func(cfg []byte) (any, error) { return named{n, &log, cfg}, nil })
	}
	c := &Config{}
	c.plugins = append(c.plugins, configFor("ResourceQuota", `{"a":1}`))
	chain, err := r.Chain(Selection{Enabled: Select([]string{"AlwaysAdmit"}, []string{"ServiceAccount"}, nil).Enabled, Config: c}, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	if err := chain.Admit(context.Background(), &admission.Attributes{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"AlwaysAdmit:", "NamespaceLifecycle:", `ResourceQuota:{"a":1}`}; !slices.Equal(log, want) {
		t.Errorf("ran %v, want %v", log, want)
	}
	_, err = r.Chain(Select([]string{"AlwaysPullImages"}, nil, nil), slog.Default())
	if err == nil || !strings.Contains(err.Error(), `admission plugin "AlwaysPullImages" is enabled but capstan does not implement it`) {
		t.Errorf("an enabled plugin capstan lacks: %v", err)
	}
}
