package wire

import "bytes"

// withoutTypeMeta returns the JSON of a built-in object as an item of its
// list in kube's answers, without kind and apiVersion: encoding/json
// writes the inlined TypeMeta first, as {"kind":"K","apiVersion":"V",...,
// and both go. It reuses data's bytes (the comma before the first kept
// field becomes the brace), so data must be the caller's own. JSON that
// does not start so (no kind set, a string with escapes) is returned as it
// is.
func withoutTypeMeta(data []byte) []byte {
	if len(data) == 0 || data[0] != '{' {
		return data
	}
	at, ok := afterStringField(data, 1, `"kind":"`)
	if ok {
		at, ok = afterStringField(data, at, `"apiVersion":"`)
	}
	if !ok {
		return data
	}
	// data[at-1] is the comma after apiVersion's value.
	data[at-1] = '{'
	return data[at-1:]
}

// afterStringField returns the offset after field (its name, colon and
// opening quote) at data[at:], the string's plain characters, its closing
// quote and the comma after it.
func afterStringField(data []byte, at int, field string) (int, bool) {
	if !bytes.HasPrefix(data[at:], []byte(field)) {
		return 0, false
	}
	at += len(field)
	end := bytes.IndexAny(data[at:], `"\`)
	if end < 0 || data[at+end] != '"' || at+end+1 >= len(data) || data[at+end+1] != ',' {
		return 0, false
	}
	return at + end + 2, true
}
