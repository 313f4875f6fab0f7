package openapi

import (
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A change of the Registry rebuilds the documents of what changed only.
func TestChangeRebuildsWhatChanged(t *testing.T) {
	s, reg := newTestService(t, coreGroup(), coordinationGroup())
	core1, _, _ := s.v3("api/v1")
	lease1, _, _ := s.v3("apis/coordination.k8s.io/v1")
	v2a, _ := s.v2()

	reg.Set(eventsGroup())
	if core2, _, _ := s.v3("api/v1"); core2 != core1 {
		t.Error("adding a group rebuilt api/v1")
	}
	if _, found, err := s.v3("apis/events.k8s.io/v1"); !found || err != nil {
		t.Errorf("the added group version: found %v, %v", found, err)
	}
	v2b, _ := s.v2()
	if v2b == v2a || v2b.etag == v2a.etag {
		t.Error("adding a group did not rebuild /openapi/v2")
	}

	g := coordinationGroup()
	g.Versions[0].Resources = append(g.Versions[0].Resources, metav1.APIResource{
		Name: "leases/status", Namespaced: true, Kind: "Lease", Verbs: statusVerbs,
	})
	reg.Set(g)
	lease2, _, _ := s.v3("apis/coordination.k8s.io/v1")
	if lease2 == lease1 || lease2.etag == lease1.etag {
		t.Error("changing a group version's resources did not rebuild it")
	}
	if core3, _, _ := s.v3("api/v1"); core3 != core1 {
		t.Error("changing another group rebuilt api/v1")
	}

	v2c, _ := s.v2()
	reg.Set(eventsGroup()) // the same again: nothing to rebuild
	if v2d, _ := s.v2(); v2d != v2c {
		t.Error("setting a group unchanged rebuilt /openapi/v2")
	}
	reg.Remove("events.k8s.io")
	if _, found, _ := s.v3("apis/events.k8s.io/v1"); found {
		t.Error("a removed group version is still served")
	}
}

// Documents are built once however many ask at the same time.
func TestConcurrentRequests(t *testing.T) {
	s, reg := newTestService(t, coreGroup(), coordinationGroup())
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.v3Root(); err != nil {
				t.Error(err)
			}
			if _, err := s.v2(); err != nil {
				t.Error(err)
			}
			if i%4 == 0 {
				reg.Set(eventsGroup())
			}
			doc, _, err := s.v3("api/v1")
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := doc.body(true, true); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
