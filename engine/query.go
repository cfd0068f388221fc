package engine

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/expr"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/syscat"
)

// env is the expression environment of one statement.
func (s *session) env(settings *gateway.Settings, params []types.Datum) *expr.Env {
	loc := time.UTC
	if settings != nil {
		loc = settings.Location()
	}
	env := &expr.Env{TimeZone: loc, StatementTime: types.TimestampTZOf(s.e.now()), Params: params, Random: rand.Uint64, Backends: s}
	if settings != nil {
		env.ExtraFloatDigits, env.ExtraFloatDigitsSet = settings.ExtraFloatDigits(), true
		env.DateStyle, env.DateOrder = settings.DateStyle()
		env.IntervalStyle = settings.IntervalStyle()
	}
	return env
}

// outputStyle is how the session prints values (error details print
// them as its text results do); the defaults without settings.
func (s *session) outputStyle() types.OutputStyle {
	if s.settings == nil {
		return types.OutputStyle{Loc: time.UTC, ExtraFloatDigits: 1}
	}
	return s.settings.OutputStyle()
}

// inputStyle is how the session reads text as values.
func (s *session) inputStyle() types.InputStyle {
	if s.settings == nil {
		return types.InputStyle{Loc: time.UTC}
	}
	return s.settings.InputStyle()
}

// scannedRelations lists the relations a plan reads (plan.ScannedRelations).
func scannedRelations(n plan.Node) []*catalog.Relation { return plan.ScannedRelations(n) }

// runPlan runs a plan once over the current snapshot of what it reads.
func (s *session) runPlan(ctx context.Context, snap *control.Snapshot, n plan.Node, env *expr.Env) ([]types.Row, error) {
	rows, _, err := s.runPlanInputs(ctx, snap, n, env)
	return rows, err
}

// runPlanInputs is runPlan also returning the relations it read.
func (s *session) runPlanInputs(ctx context.Context, snap *control.Snapshot, n plan.Node, env *expr.Env) ([]types.Row, map[catalog.ID]zset.Batch, error) {
	inputs, err := s.readPlanned(ctx, snap, n, rsql.PlanReads(n, env, readIndexes{snap}))
	if err != nil {
		return nil, nil, err
	}
	rows, err := s.e.evaluate(ctx, env, func() ([]types.Row, error) { return runOnce(n, inputs, env) })
	return rows, inputs, err
}

func (s *session) query(ctx context.Context, snap *control.Snapshot, q *rsql.Query, env *expr.Env) ([]types.Row, error) {
	inputs, err := s.readPlanned(ctx, snap, q.Plan, rsql.PlanReads(q.Plan, env, readIndexes{snap}))
	if err != nil {
		return nil, err
	}
	env.Catalog = syscat.Info(func() (*syscat.Env, error) { return s.systemEnv(ctx, snap) })
	return s.e.evaluate(ctx, env, func() ([]types.Row, error) {
		run := q
		if len(q.RegColumns) > 0 {
			// Keep the hidden oid columns of regclass/regtype results.
			wide := *q
			wide.Columns = q.Plan.Schema()
			run = &wide
		}
		res, err := rsql.RunQuery(run, snapshot{batches: inputs}, env)
		if err != nil {
			return nil, err
		}
		if len(q.RegColumns) > 0 {
			regValues(q, res.Rows)
		}
		regArrayValues(q.Columns, res.Rows)
		return res.Rows, nil
	})
}

// regValues turns regclass/regtype result columns into gateway.RegValues
// (the name from the query, the oid from its hidden column) and drops the
// hidden columns, so the column is described with its real type and sent
// as a name in text and an oid in binary, as PostgreSQL does.
func regValues(q *rsql.Query, rows []types.Row) {
	width := len(q.Columns)
	for i, r := range rows {
		for _, rc := range q.RegColumns {
			name, ok := r[rc.Col].(string)
			oid, ok2 := r[rc.OID].(int64)
			if ok && ok2 {
				r[rc.Col] = gateway.RegValue{OID: oid, Name: name}
			}
		}
		rows[i] = r[:width]
	}
}
