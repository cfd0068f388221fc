package engine

import (
	"context"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// CopyIn implements gateway.Session: COPY t [(cols)] FROM STDIN. Rows are
// checked and buffered per chunk; nothing is visible before the
// transaction commits, and Abort leaves the transaction as it was.
func (s *session) CopyIn(ctx context.Context, req gateway.CopyInRequest) (gateway.CopyInSink, error) {
	snap, err := s.e.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	s.settings = req.Settings
	name := []string{req.Table}
	if req.Schema != "" {
		name = []string{req.Schema, req.Table}
	}
	rel, ok := s.lookup(snap, name)
	if !ok {
		return nil, errcode.New(errcode.UndefinedObject, "relation %q does not exist", req.Table)
	}
	if err := s.checkNeeds(ctx, snap, []relationNeed{{name: name, priv: control.PrivInsert}}); err != nil {
		return nil, err
	}
	w, err := s.writerFor(ctx, snap, rel, "COPY")
	if err != nil {
		return nil, err
	}
	sink := &copySink{s: s, snap: snap, w: w, env: s.env(req.Settings, nil)}
	sink.env.Sequences = s.sequences(ctx)
	// positions[i] is the table column of COPY field i.
	if len(req.Columns) == 0 {
		for i := range rel.Columns {
			sink.positions = append(sink.positions, i)
		}
	} else {
		seen := map[int]bool{}
		for _, c := range req.Columns {
			i := rel.ColumnIndex(c)
			if i < 0 {
				return nil, errcode.New(errcode.UndefinedColumnCode, "column %q of relation %q does not exist", c, rel.Name)
			}
			if seen[i] {
				return nil, errcode.New(errcode.DuplicateColumnCode, "column %q specified more than once", c)
			}
			seen[i] = true
			sink.positions = append(sink.positions, i)
		}
	}
	// Columns not in the COPY get their defaults.
	sink.defaults = make([]expr.Expr, len(rel.Columns))
	inCopy := map[int]bool{}
	for _, p := range sink.positions {
		inCopy[p] = true
	}
	for i, c := range rel.Columns {
		if inCopy[i] || c.Default == "" {
			continue
		}
		sc, err := bind.DefaultExpr(c.Default, c.Type, c.Name)
		if err != nil {
			return nil, err
		}
		if sink.defaults[i], err = lowerScalar(sc); err != nil {
			return nil, err
		}
	}
	sink.asIs = rowsAsIs(sink.positions, len(rel.Columns))
	// A savepoint, so Abort can undo the rows of a failed COPY.
	if sink.mark, err = s.mark(ctx); err != nil {
		return nil, err
	}
	return sink, nil
}

type copySink struct {
	s         *session
	snap      *control.Snapshot
	w         *writer
	env       *expr.Env
	positions []int
	defaults  []expr.Expr
	n         int64
	// mark is the depth of the savepoint taken before the first row.
	mark int
	// asIs: the gateway's rows (fresh per row, full width, in column
	// order) are inserted without copying them (rowsAsIs).
	asIs bool
}

func (c *copySink) Columns() types.Schema {
	out := make(types.Schema, len(c.positions))
	for i, p := range c.positions {
		col := c.w.rel.Columns[p]
		out[i] = types.Column{Name: col.Name, Type: col.Type, Nullable: !col.NotNull}
	}
	return out
}

func (c *copySink) Write(ctx context.Context, rows []types.Row) error {
	full := rows
	if !c.asIs {
		full = make([]types.Row, len(rows))
		for i, r := range rows {
			row := make(types.Row, len(c.w.rel.Columns))
			for j, p := range c.positions {
				row[p] = r[j]
			}
			for j, d := range c.defaults {
				if d != nil {
					v, err := d.Eval(c.env, row)
					if err != nil {
						return err
					}
					row[j] = v
				}
			}
			full[i] = row
		}
	}
	n, err := c.w.insertRows(ctx, c.snap, full, nil, c.env, nil)
	c.n += n
	if err != nil {
		return err
	}
	if err := c.w.verifyChecks(c.env); err != nil {
		return err
	}
	if err := c.w.flush(ctx); err != nil {
		return err
	}
	err = c.w.checkUnique(ctx, c.w.written)
	// NB: nil, not [:0]: the list may be the chunk's rows (insertNew).
	c.w.written = nil
	return err
}

// rowsAsIs reports whether a COPY's rows are the table's rows as they
// are: it lists every column in table order (so no defaults either).
func rowsAsIs(positions []int, width int) bool {
	if len(positions) != width {
		return false
	}
	for j, p := range positions {
		if p != j {
			return false
		}
	}
	return true
}

func (c *copySink) Finish(ctx context.Context) (int64, error) {
	return c.n, c.s.release(ctx, c.mark)
}

func (c *copySink) Abort(ctx context.Context) error {
	if err := c.s.rollbackTo(ctx, c.mark); err != nil {
		return err
	}
	return c.s.release(ctx, c.mark)
}

var _ = catalog.KindTable
