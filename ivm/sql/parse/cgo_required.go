//go:build !cgo

package parse

// The SQL parser is PostgreSQL's own, compiled from C through cgo, and Go
// turns cgo off when it finds no C compiler. The build then fails; this
// undefined name makes its first error say why (the next ones are the
// parser's missing functions).
var _ = cgo_is_off_install_a_C_compiler_such_as_gcc_and_build_again
