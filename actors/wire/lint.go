package wire

import (
	"fmt"
	"reflect"
)

// CheckValueType reports why values of t cannot be messages (nothing if
// they can): a message is a value that can leave its sender's memory, so
// it holds
//   - no func, chan, unsafe.Pointer or uintptr (behaviour and addresses,
//     which no other process can hold), anywhere inside it;
//   - no unexported field (hidden state the codec cannot carry);
//   - pointers only to values (a pointer to a type with hidden fields is
//     a pointer to someone's shared state, e.g. *control.Snapshot).
//
// Interfaces are allowed: what they hold is checked when the message is
// encoded (a registered message, an error, or a datum). types.Row is a
// row of datums (row.go).
func CheckValueType(t reflect.Type) []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		if seen[t] {
			return
		}
		seen[t] = true
		if t == rowType {
			return
		}
		switch t.Kind() {
		case reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.Uintptr:
			out = append(out, fmt.Sprintf("%s is a %s: behaviour or an address cannot cross a process", path, t.Kind()))
		case reflect.Complex64, reflect.Complex128:
			out = append(out, fmt.Sprintf("%s is a %s, which the codec does not carry", path, t.Kind()))
		case reflect.Struct:
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if !f.IsExported() {
					out = append(out, fmt.Sprintf("%s.%s is unexported: hidden state the codec cannot carry", path, f.Name))
					continue
				}
				walk(f.Type, path+"."+f.Name)
			}
		case reflect.Pointer:
			if hidden := hiddenField(t.Elem()); hidden != "" {
				out = append(out, fmt.Sprintf("%s points to %s, which has the hidden field %s: a pointer to shared state", path, t.Elem(), hidden))
				return
			}
			walk(t.Elem(), path)
		case reflect.Slice, reflect.Array:
			walk(t.Elem(), path+"[]")
		case reflect.Map:
			walk(t.Key(), path+"[key]")
			walk(t.Elem(), path+"[value]")
		}
	}
	walk(t, TypeName(t))
	return out
}

// hiddenField names an unexported field of a struct type ("" if none).
func hiddenField(t reflect.Type) string {
	if t.Kind() != reflect.Struct {
		return ""
	}
	for i := 0; i < t.NumField(); i++ {
		if !t.Field(i).IsExported() {
			return t.Field(i).Name
		}
	}
	return ""
}
