package adhoc

import (
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// recursiveRowsMax bounds the rows a recursive CTE may produce ad hoc (an
// endless recursion fails instead of running out of memory).
const recursiveRowsMax = 1_000_000

// expandRecursive replaces every recursive CTE (plan.RecursiveUnion) that
// no longer references an outer query by its rows: the non-recursive term,
// then the recursive term run over the previous round's new rows until a
// round adds none (PostgreSQL's iteration).
func expandRecursive(n plan.Node, snap Snapshot, env *expr.Env) (plan.Node, error) {
	var firstErr error
	out := plan.Transform(n, func(x plan.Node) plan.Node {
		ru, ok := x.(*plan.RecursiveUnion)
		if !ok || firstErr != nil || plan.HasCorrelation(ru) {
			return x
		}
		if workScans(ru.Step, ru.Work) > 1 {
			// NB: PostgreSQL's iteration runs the recursive term over the
			// previous round's rows only, which is the fixpoint only when
			// the term reads the recursive relation once (PostgreSQL
			// refuses the other case). A non-linear term is left to the
			// circuit's fixpoint operator, as in a view.
			return x
		}
		rows, err := runRecursive(ru, snap, env)
		if err != nil {
			firstErr = err
			return x
		}
		v := &plan.Values{Cols: ru.Cols, Rows: make([][]plan.Scalar, len(rows))}
		for i, r := range rows {
			row := make([]plan.Scalar, len(r))
			for j, d := range r {
				row[j] = &plan.Const{Value: d, Typ: ru.Cols[j].Type}
			}
			v.Rows[i] = row
		}
		return v
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

func runRecursive(ru *plan.RecursiveUnion, snap Snapshot, env *expr.Env) ([]types.Row, error) {
	seen := map[string]bool{}
	// fresh keeps the rows not produced before (UNION) or all (UNION ALL).
	fresh := func(rows []types.Row) []types.Row {
		if ru.All {
			return rows
		}
		var out []types.Row
		for _, r := range rows {
			k := rowKey(ru.Cols, r)
			if !seen[k] {
				seen[k] = true
				out = append(out, r)
			}
		}
		return out
	}
	init, err := RunPlan(ru.Init, snap, env)
	if err != nil {
		return nil, err
	}
	work := fresh(init)
	all := append([]types.Row(nil), work...)
	for len(work) > 0 {
		next, err := RunPlan(ru.Step, workSnapshot{Snapshot: snap, rel: ru.Work, rows: work}, env)
		if err != nil {
			return nil, err
		}
		work = fresh(next)
		all = append(all, work...)
		if len(all) > recursiveRowsMax {
			return nil, errcode.New(errcode.SQLFeatureNotSupported, "recursive query \"%s\" produced more than %d rows", ru.Work.Name, recursiveRowsMax).
				WithDetail("construct: WITH RECURSIVE")
		}
	}
	return all, nil
}

// rowKey identifies a row's values (NULLs equal, as UNION compares).
func rowKey(cols []plan.Column, r types.Row) string {
	var b strings.Builder
	for i, v := range r {
		if v == nil {
			b.WriteString("\x00N")
		} else {
			b.WriteString("\x00V")
			b.WriteString(plan.FormatDatum(v, cols[i].Type))
		}
	}
	return b.String()
}

// workSnapshot serves a recursive CTE's working table from the previous
// round's rows and everything else from the query's snapshot.
type workSnapshot struct {
	Snapshot
	rel  *catalog.Relation
	rows []types.Row
}

func (w workSnapshot) ScanRelation(rel *catalog.Relation) (zset.Batch, error) {
	if rel.ID != w.rel.ID {
		return w.Snapshot.ScanRelation(rel)
	}
	var b zset.Batch
	for _, r := range w.rows {
		b.Add(r, 1)
	}
	return b, nil
}

// workScans counts the scans of the working table work in n.
func workScans(n plan.Node, work *catalog.Relation) int {
	count := 0
	if s, ok := n.(*plan.Scan); ok && s.Relation.ID == work.ID {
		count++
	}
	for _, in := range n.Inputs() {
		count += workScans(in, work)
	}
	return count
}
