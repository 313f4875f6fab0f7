package storagecodec

import (
	"reflect"
	"testing"
)

type carrySpec struct {
	Name  string  `json:"name"`
	Key   []byte  `json:"key"`
	Count *int64  `json:"count,omitempty"`
	Items []item  `json:"items,omitempty"`
	Inner *inner  `json:"inner,omitempty"`
	Rate  float64 `json:"rate,omitempty"`
}

type item struct {
	A string `json:"a,omitempty"`
	B string `json:"b,omitempty"`
}

type inner struct {
	X string `json:"x,omitempty"`
}

func TestLostFieldsRestore(t *testing.T) {
	big := int64(1<<62 + 1)
	tests := []struct {
		name                 string
		before, after, write carrySpec
		want                 carrySpec
	}{
		{name: "nothing lost",
			before: carrySpec{Name: "a", Key: []byte("k")}, after: carrySpec{Name: "a", Key: []byte("k")},
			write: carrySpec{Name: "b"}, want: carrySpec{Name: "b"}},
		{name: "a field the trip drops comes back",
			before: carrySpec{Name: "a", Key: []byte("k"), Count: &big}, after: carrySpec{Name: "a"},
			write: carrySpec{Name: "b"}, want: carrySpec{Name: "b", Key: []byte("k"), Count: &big}},
		{name: "a field the update set stays",
			before: carrySpec{Key: []byte("k")}, after: carrySpec{},
			write: carrySpec{Key: []byte("new")}, want: carrySpec{Key: []byte("new")}},
		{name: "in objects and lists of the same length",
			before: carrySpec{Items: []item{{A: "1", B: "x"}, {A: "2"}}, Inner: &inner{X: "i"}},
			after:  carrySpec{Items: []item{{A: "1"}, {A: "2"}}, Inner: &inner{}},
			write:  carrySpec{Items: []item{{A: "3"}, {A: "4"}}, Inner: &inner{}},
			want:   carrySpec{Items: []item{{A: "3", B: "x"}, {A: "4"}}, Inner: &inner{X: "i"}}},
		{name: "not into a list the update resized",
			before: carrySpec{Items: []item{{A: "1", B: "x"}}}, after: carrySpec{Items: []item{{A: "1"}}},
			write: carrySpec{Items: []item{{A: "3"}, {A: "4"}}}, want: carrySpec{Items: []item{{A: "3"}, {A: "4"}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lost, err := LostFields(&tc.before, &tc.after)
			if err != nil {
				t.Fatal(err)
			}
			got := tc.write
			if err := lost.Restore(&got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("restored %+v, want %+v (lost %v)", got, tc.want, lost)
			}
		})
	}
}
