package circuit

import "github.com/rockstream/rockstream/ivm/op"

// Window appends one column per window call of spec to each input row
// (op.Window: per-partition recompute).
func (b *Builder) Window(in Node, spec op.WindowSpec) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("window", []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewWindow(s, schema, spec)
	})
}

// Session assigns rows to session windows (op.Session).
func (b *Builder) Session(in Node, spec op.SessionSpec) Node {
	if !b.check(in) {
		return Node{}
	}
	schema := b.in(in)
	return b.add("session", []Node{in}, func(s op.State) (op.Operator, error) {
		return op.NewSession(s, schema, spec)
	})
}
