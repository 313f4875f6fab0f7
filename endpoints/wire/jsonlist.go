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

// writeJSONList writes head, the JSON of the list without items (ending
// in JSONListEnd), with the items in it. Each is encoded as encoding/json
// encodes it inside the list, as apimachinery's streaming encoder writes
// them; with ids, the items are the watch cache's, whose encodings are
// looked up in remembered, or kept there, by their identities. With
// typed, the items are of built-in kinds and lose their kind and
// apiVersion, as kube writes them (see withoutTypeMeta); the remembered
// encodings are kept without them.
func writeJSONList(w io.Writer, head []byte, items Items, typed bool, remembered *ItemEncodings, ids Identities) error {
	if _, err := w.Write(head[:len(head)-len("]}\n")]); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range items.Len() {
		if i > 0 {
			if _, err := w.Write(comma); err != nil {
				return err
			}
		}
		var id *byte
		if ids != nil {
			id = ids(i)
		}
		data := remembered.Lookup(id, JSON)
		if data == nil {
			item, err := items.At(i)
			if err != nil {
				return err
			}
			buf.Reset()
			if err := enc.Encode(item); err != nil {
				return err
			}
			data = buf.Bytes()[:buf.Len()-1] // Encode's newline
			if typed {
				data = withoutTypeMeta(data)
			}
			if id != nil {
				data = bytes.Clone(data)
				remembered.remember(id, JSON, data)
			}
		}
		if _, err := w.Write(data); err != nil {
			return err
		}
	}
	_, err := w.Write([]byte("]}\n"))
	return err
}

var comma = []byte{','}
