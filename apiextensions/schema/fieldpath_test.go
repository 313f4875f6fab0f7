package schema

import "testing"

func TestValidFieldPath(t *testing.T) {
	s := structural(t, `
type: object
properties:
  spec:
    type: object
    properties:
      a.b: {type: string}
      list: {type: array, items: {type: string}}
      labels: {type: object, additionalProperties: {type: string}}
`)
	tests := []struct {
		path, want, wantType, wantErr string
	}{
		{path: ".spec", want: "spec", wantType: "object"},
		{path: ".spec['a.b']", want: "spec.a.b", wantType: "string"},
		{path: ".spec.labels['x y']", want: "spec.labels[x y]", wantType: "string"},
		{path: ".spec.labels.foo", want: "spec.labels[foo]", wantType: "string"},
		{path: `.spec['it\'s']`, wantErr: "does not refer to a valid field"},
		{path: ".spec.nope", wantErr: "does not refer to a valid field"},
		{path: ".spec.list[0]", wantErr: "expected single quoted string but got 0"},
		{path: "spec", wantErr: "expected [ or . but got: spec"},
		{path: ".spec.", wantErr: "unexpected end of JSON path"},
		{path: ".spec['a.b'", wantErr: "unexpected end of JSON path"},
		{path: `.spec['\q']`, wantErr: `invalid string literal: invalid escape char \q`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, ps, err := ValidFieldPath(tt.path, s)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.String() != tt.want || ps.Type != tt.wantType {
				t.Errorf("got %s (%s), want %s (%s)", p, ps.Type, tt.want, tt.wantType)
			}
		})
	}
}
