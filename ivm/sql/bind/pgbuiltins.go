package bind

import (
	_ "embed"
	"strings"
)

// pgFuncs lists PostgreSQL 15's built-in function names (see the file's
// header for the query that generated it), so that a call to one RockStream
// does not implement fails as unsupported (0A000, RS-2001 naming it) at
// DDL time instead of "function does not exist" (42883), which PostgreSQL
// only says of functions that really do not exist.
//
//go:embed pgfuncs.txt
//lint:immutable embedded data, never written
var pgFuncs string

// pgBuiltinKind returns PostgreSQL's prokind of a built-in function name:
// 'a' aggregate, 'w' window, 'f' plain function; 0 when PostgreSQL has no
// built-in function of that name.
func pgBuiltinKind(name string) byte {
	if name == "" || strings.ContainsAny(name, " \n") {
		return 0
	}
	for _, k := range []byte{'f', 'a', 'w'} {
		if strings.Contains(pgFuncs, "\n"+string(k)+" "+name+"\n") {
			return k
		}
	}
	return 0
}

// unsupportedBuiltin is the error for a call of a PostgreSQL built-in
// function RockStream does not implement (nil when name is not one).
func (b *binder) unsupportedBuiltin(name string, loc int32) error {
	switch pgBuiltinKind(name) {
	case 'a':
		return b.unsupported(loc, "aggregate function "+name+"()")
	case 'w':
		return b.unsupported(loc, "window function "+name+"()")
	case 'f':
		return b.unsupported(loc, "function "+name+"()")
	}
	return nil
}
