package authn

import (
	"context"
	"testing"
)

func TestUserContext(t *testing.T) {
	u := &User{Name: "jane", Groups: []string{"dev"}}
	tests := []struct {
		name   string
		ctx    context.Context
		want   *User
		wantOK bool
	}{
		{"carries user", WithUser(context.Background(), u), u, true},
		{"no user", context.Background(), nil, false},
		{"nil user", WithUser(context.Background(), nil), nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := UserFrom(tt.ctx)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("UserFrom = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
