package cache

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
)

// nameForHandler returns a human-readable name for a handler, used in log
// messages and in the names of the handler's sync checker:
//
//   - for ResourceEventHandlerFuncs (value or pointer) and
//     ResourceEventHandlerDetailedFuncs, the common package/type qualifier of
//     the set functions when they are all defined in the same place, else
//     their full names joined with "+";
//   - for the typed adapters, the name of the typed handler inside;
//   - for anything else, the package path and name of the (pointed-to)
//     type.
//
// When nothing better is found the %T of the handler is used.
func nameForHandler(handler ResourceEventHandler) (name string) {
	defer func() {
		if name == "" {
			name = fmt.Sprintf("%T", handler)
		}
	}()
	switch h := handler.(type) {
	case nil:
		return ""
	case ResourceEventHandlerFuncs:
		return nameForFunctions(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
	case *ResourceEventHandlerFuncs:
		if h == nil {
			return ""
		}
		return nameForFunctions(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
	case ResourceEventHandlerDetailedFuncs:
		return nameForFunctions(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
	case *ResourceEventHandlerDetailedFuncs:
		if h == nil {
			return ""
		}
		return nameForFunctions(h.AddFunc, h.UpdateFunc, h.DeleteFunc)
	case interface{ handlerName() string }:
		return h.handlerName()
	}
	return nameForType(reflect.ValueOf(handler))
}

// nameForType returns "pkgpath.TypeName" of v's type, looking through one
// non-nil pointer. Unnamed types give "".
func nameForType(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	t := v.Type()
	if t.Kind() == reflect.Pointer && !v.IsNil() {
		t = t.Elem()
	}
	name := t.PkgPath()
	if name != "" && t.Name() != "" {
		name += "."
	}
	return name + t.Name()
}

// nameForFunctions names a set of functions, skipping nil ones. If all of
// them share the same qualifier (everything before the last "."), that
// qualifier is the name, otherwise the full names joined with "+".
func nameForFunctions(fs ...any) string {
	var names []string
	qualifier := ""
	same := true
	for _, f := range fs {
		v := reflect.ValueOf(f)
		if !v.IsValid() || v.Kind() != reflect.Func || v.IsNil() {
			continue
		}
		fn := runtime.FuncForPC(v.Pointer())
		if fn == nil || fn.Name() == "" {
			continue
		}
		full := fn.Name()
		names = append(names, full)
		q := full
		if i := strings.LastIndexByte(q, '.'); i > 0 {
			q = q[:i]
		}
		if len(names) == 1 {
			qualifier = q
		} else if q != qualifier {
			same = false
		}
	}
	if same {
		return qualifier
	}
	return strings.Join(names, "+")
}
