package engine

import (
	"context"
	"sort"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
)

// env is the expression environment of one statement.
func (s *session) env(settings *gateway.Settings, params []types.Datum) *expr.Env {
	loc := time.UTC
	if settings != nil {
		loc = settings.Location()
	}
	now := time.Now()
	micros := now.UnixMicro() - pgEpochMicros
	return &expr.Env{TimeZone: loc, StatementTime: types.TimestampTZ(micros), Params: params}
}

// pgEpochMicros is 2000-01-01 00:00:00 UTC in Unix microseconds.
const pgEpochMicros = 946684800 * 1_000_000

// scannedRelations lists the relations a plan reads, deduplicated, in
// first-seen order.
func scannedRelations(n plan.Node) []*catalog.Relation {
	var out []*catalog.Relation
	seen := map[catalog.ID]bool{}
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if sc, ok := n.(*plan.Scan); ok && !seen[sc.Relation.ID] {
			seen[sc.Relation.ID] = true
			out = append(out, sc.Relation)
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
		for _, sc := range plan.Scalars(n) {
			plan.Walk(sc, func(x plan.Scalar) bool {
				if sq, ok := x.(*plan.Subquery); ok {
					walk(sq.Plan)
				}
				return true
			})
		}
	}
	walk(n)
	return out
}

// runPlan runs a plan once over the current snapshot of what it reads.
func (s *session) runPlan(ctx context.Context, snap *control.Snapshot, n plan.Node, env *expr.Env) (zset.Batch, error) {
	inputs, err := s.readSnapshot(ctx, snap, scannedRelations(n))
	if err != nil {
		return zset.Batch{}, err
	}
	return runOnce(n, inputs, env)
}

// expandRows turns a consolidated Z-set into a row list (a row of weight w
// appears w times; a negative weight is an engine bug).
func expandRows(b zset.Batch) []types.Row {
	b = zset.Consolidate(b)
	var rows []types.Row
	for i, r := range b.Rows {
		// INVARIANT: a query result has no negative multiplicities.
		if b.Weights[i] < 0 {
			panic("engine: negative multiplicity in a query result")
		}
		for w := int64(0); w < b.Weights[i]; w++ {
			rows = append(rows, r)
		}
	}
	return rows
}

func (s *session) query(ctx context.Context, snap *control.Snapshot, q *rsql.Query, env *expr.Env) ([]types.Row, error) {
	b, err := s.runPlan(ctx, snap, q.Plan, env)
	if err != nil {
		return nil, err
	}
	rows := expandRows(b)
	schema := q.Plan.Schema()
	if len(q.Order) > 0 {
		sortRows(rows, schema, q.Order)
	}
	if q.Offset > 0 {
		if q.Offset >= int64(len(rows)) {
			rows = nil
		} else {
			rows = rows[q.Offset:]
		}
	}
	if q.Limit >= 0 && q.Limit < int64(len(rows)) {
		rows = rows[:q.Limit]
	}
	width := len(q.Columns)
	for i, r := range rows {
		if len(r) > width {
			rows[i] = r[:width]
		}
	}
	return rows, nil
}

// sortRows sorts by ORDER BY keys with PostgreSQL's NULL placement; rows
// equal on every key keep their (deterministic, encoding) order.
func sortRows(rows []types.Row, schema []plan.Column, keys []plan.SortKey) {
	sort.SliceStable(rows, func(i, j int) bool {
		for _, k := range keys {
			a, b := rows[i][k.Col], rows[j][k.Col]
			var c int
			switch {
			case a == nil && b == nil:
				c = 0
			case a == nil:
				c = 1
				if k.NullsFirst {
					c = -1
				}
			case b == nil:
				c = -1
				if k.NullsFirst {
					c = 1
				}
			default:
				c = types.Compare(schema[k.Col].Type, a, b)
				if k.Desc {
					c = -c
				}
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
}
