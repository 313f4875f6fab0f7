package cel

import (
	"testing"
)

func TestValidFieldPath(t *testing.T) {
	s := object(map[string]S{
		"a":    object(map[string]S{"b": intg()}),
		"x.y":  str(),
		"m":    mapOf(object(map[string]S{"c": str()})),
		"any":  {Type: "object", AdditionalPropertiesAllowed: true},
		"list": list(str()),
	})
	tests := []struct {
		path    string
		noArray bool
		want    string
		wantErr string
	}{
		{path: "", want: "<nil>"},
		{path: ".a", want: "a"},
		{path: ".a.b", want: "a.b"},
		{path: "['a'].b", want: "a.b"},
		{path: ".['x.y']", wantErr: "does not refer to a valid field"},
		{path: "['x.y']", want: "x.y"},
		{path: ".m.k", want: "m[k]"},
		{path: ".m['k.l'].c", want: "m[k.l].c"},
		{path: `.m['it\'s']`, want: "m[it's]"},
		{path: `.m['a\nb']`, want: "m[a\nb]"},
		{path: `.m['a\qb']`, wantErr: `invalid string literal: invalid escape char \q`},
		{path: ".any.k", want: "any[k]"},
		{path: ".any.k.l", wantErr: "does not refer to a valid field"},
		{path: ".nope", wantErr: "does not refer to a valid field"},
		{path: ".a.b.c", wantErr: "does not refer to a valid field"},
		{path: ".list[0]", wantErr: "expected single quoted string but got 0"},
		{path: "a", wantErr: "expected [ or . but got: a"},
		{path: ".a.", wantErr: "unexpected end of JSON path"},
		{path: ".m['k'", wantErr: "unexpected end of JSON path"},
		{path: ".m['k'.", wantErr: "expected ] but got ."},
		{path: ".m['k", wantErr: "expected single quoted string but got 'k"},
		{path: "['a']", noArray: true, wantErr: "array notation is not allowed"},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			var opts []FieldPathOption
			if tc.noArray {
				opts = append(opts, WithFieldPathAllowArrayNotation(false))
			}
			got, _, err := ValidFieldPath(tc.path, &s, opts...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
