package printers

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// now is the clock of the tests.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ago is the time d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// created is metadata of an object named name, created an hour ago.
func created(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, CreationTimestamp: ago(time.Hour)}
}

// rowCase is an object, as its row function prints it, and the cells it
// should have.
type rowCase struct {
	name string
	row  func() (metav1.TableRow, error)
	want []any
}

func runRows(t *testing.T, cases []rowCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			row, err := tc.row()
			if err != nil {
				t.Fatal(err)
			}
			if !equalCells(row.Cells, tc.want) {
				t.Errorf("cells:\n got %#v\nwant %#v", row.Cells, tc.want)
			}
		})
	}
}

// printed adapts a row function and an object to a rowCase's row.
func printed[T any](f func(T, time.Time) (metav1.TableRow, error), obj T) func() (metav1.TableRow, error) {
	return func() (metav1.TableRow, error) { return f(obj, now) }
}

func ptr[T any](v T) *T { return &v }

func equalCells(got, want []any) bool { return reflect.DeepEqual(got, want) }
