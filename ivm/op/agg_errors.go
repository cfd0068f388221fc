package op

import (
	"slices"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// Errors of the generic Aggregate's output rows. A group's output can be
// an error (a float sum out of range, a DISTINCT sum that fails), and the
// error must leave the view's error Z-set exactly when the row does: so,
// like the last output row, the last output's errors are stored with the
// group's state (a row of SQLSTATE, code, message triples after the
// output row) and replaced (−1 old, +1 new) when they change.

// addError records a finalize error of g's new output (nil: none); an error
// without an RS code is returned (a bug, not data).
func (g *aggGroup) addError(err error) error {
	if err == nil {
		return nil
	}
	e, ok := errcode.As(err)
	if !ok {
		return err
	}
	g.newErrors = append(g.newErrors, e.State(), e.Code.ID, e.Message)
	return nil
}

// emitErrors replaces g's last output errors by its new ones in ctx's
// error Z-set.
func (g *aggGroup) emitErrors(ctx *Context) {
	if slices.Equal(g.lastErrors, g.newErrors) {
		return
	}
	key := zset.FormatRow(g.keyRow)
	for i := 0; i+2 < len(g.lastErrors); i += 3 {
		ctx.Errors.Add(types.Row{g.lastErrors[i], g.lastErrors[i+1], g.lastErrors[i+2], key}, -1)
	}
	for i := 0; i+2 < len(g.newErrors); i += 3 {
		ctx.Errors.Add(types.Row{g.newErrors[i], g.newErrors[i+1], g.newErrors[i+2], key}, +1)
	}
}
