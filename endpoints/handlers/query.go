package handlers

import (
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var timeType = reflect.TypeFor[metav1.Time]()

// DecodeQuery sets the fields of into, a pointer to an options struct
// (PodLogOptions, PodExecOptions...), from the query parameters named as
// their JSON fields, as kube's generated url.Values conversions do: a
// bool is false only for "0" or "false", a list takes every value (and,
// of numbers, each comma-separated part), other fields the first value.
// Parameters no field names are ignored.
func DecodeQuery(query url.Values, into any) error {
	v := reflect.ValueOf(into).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		values, ok := query[name]
		if name == "" || name == "-" || !ok || len(values) == 0 {
			continue
		}
		if err := setField(v.Field(i), values); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func setField(f reflect.Value, values []string) error {
	switch {
	case f.Kind() == reflect.Pointer && f.Type().Elem() == timeType:
		t, err := time.Parse(time.RFC3339, values[0])
		if err != nil {
			return err
		}
		f.Set(reflect.ValueOf(&metav1.Time{Time: t}))
		return nil
	case f.Kind() == reflect.Pointer:
		p := reflect.New(f.Type().Elem())
		if err := setField(p.Elem(), values); err != nil {
			return err
		}
		f.Set(p)
		return nil
	case f.Kind() == reflect.Slice:
		return setSlice(f, values)
	}
	return setScalar(f, values[0])
}

func setSlice(f reflect.Value, values []string) error {
	elem := f.Type().Elem().Kind()
	var parts []string
	for _, v := range values {
		if elem == reflect.String {
			parts = append(parts, v)
			continue
		}
		parts = append(parts, strings.Split(v, ",")...)
	}
	s := reflect.MakeSlice(f.Type(), len(parts), len(parts))
	for i, p := range parts {
		if err := setScalar(s.Index(i), p); err != nil {
			return err
		}
	}
	f.Set(s)
	return nil
}

func setScalar(f reflect.Value, v string) error {
	switch f.Kind() {
	case reflect.String:
		f.SetString(v)
	case reflect.Bool:
		f.SetBool(!(v == "0" || strings.EqualFold(v, "false")))
	case reflect.Int, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(v, 10, f.Type().Bits())
		if err != nil {
			return err
		}
		f.SetInt(n)
	default:
		return fmt.Errorf("cannot decode a query parameter into %s", f.Type())
	}
	return nil
}
