package fairqueuing

import (
	"slices"
	"testing"

	"k8s.io/apiserver/pkg/util/shufflesharding"
)

func TestDealerErrors(t *testing.T) {
	for _, tc := range []struct {
		deck, hand int
		ok         bool
	}{
		{128, 6, true}, {1, 1, true}, {64, 8, true}, {4, 4, true},
		{0, 1, false}, {4, 0, false}, {4, 5, false}, {1 << 20, 15, false}, {128, 16, false},
	} {
		_, err := NewDealer(tc.deck, tc.hand)
		if (err == nil) != tc.ok {
			t.Errorf("NewDealer(%d, %d) = %v, want ok %v", tc.deck, tc.hand, err, tc.ok)
		}
	}
}

// TestDealerHands checks fixed hands (worked out by hand for the small
// decks) and that every hand has distinct cards in range.
func TestDealerHands(t *testing.T) {
	for _, tc := range []struct {
		deck, hand int
		hash       uint64
		want       []int
	}{
		{4, 1, 6, []int{2}},
		// digits 6%4=2, 1%3=1: card 2, then the second of {0,1,3} = 1.
		{4, 2, 6, []int{2, 1}},
		// digits 3, 3%3=0... hash 3: 3%4=3, 0%3=0, 0%2=0: 3, 0, then 1.
		{4, 3, 3, []int{3, 0, 1}},
		{4, 4, 0, []int{0, 1, 2, 3}},
	} {
		d, err := NewDealer(tc.deck, tc.hand)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.DealIntoHand(tc.hash, nil); !slices.Equal(got, tc.want) {
			t.Errorf("deal(%d of %d, %d) = %v, want %v", tc.hand, tc.deck, tc.hash, got, tc.want)
		}
	}
	d, _ := NewDealer(128, 6)
	for hash := uint64(0); hash < 5000; hash++ {
		h := d.DealIntoHand(hash*0x9e3779b97f4a7c15, nil)
		seen := map[int]bool{}
		for _, c := range h {
			if c < 0 || c >= 128 || seen[c] {
				t.Fatalf("hash %d: bad hand %v", hash, h)
			}
			seen[c] = true
		}
	}
}

// TestDealerMatchesKube: a flow must land in the same queues as on a
// kube-apiserver with the same configuration.
func TestDealerMatchesKube(t *testing.T) {
	for _, size := range [][2]int{{128, 6}, {64, 8}, {16, 4}, {1, 1}, {7, 7}, {32, 12}} {
		d, _ := NewDealer(size[0], size[1])
		k, err := shufflesharding.NewDealer(size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		for i := uint64(0); i < 2000; i++ {
			hash := i * 0x9e3779b97f4a7c15
			if got, want := d.DealIntoHand(hash, nil), k.DealIntoHand(hash, make([]int, 0, size[1])); !slices.Equal(got, want) {
				t.Fatalf("deck %d hand %d hash %d: %v, kube %v", size[0], size[1], hash, got, want)
			}
		}
	}
}
