package wire

import (
	"bytes"
	"encoding/json"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
)

// Items are a list's items, one at a time: storage.ListItems, or the
// metadata of each.
type Items interface {
	Len() int
	At(i int) (runtime.Object, error)
}

// JSONListEnd ends the JSON of a list with no items, as the codec writes
// it: a head WriteJSONList can put items in.
var JSONListEnd = []byte(`"items":[]}` + "\n")

// WriteJSONList writes head, the JSON of the list without items (ending
// in JSONListEnd), with the items in it. Each is encoded as encoding/json
// encodes it inside the list, as apimachinery's streaming encoder writes
// them.
func WriteJSONList(w io.Writer, head []byte, items Items) error {
	if _, err := w.Write(head[:len(head)-len("]}\n")]); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range items.Len() {
		item, err := items.At(i)
		if err != nil {
			return err
		}
		buf.Reset()
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := enc.Encode(item); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	_, err := w.Write([]byte("]}\n"))
	return err
}
