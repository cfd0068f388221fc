package expr

import "github.com/rockstream/rockstream/ivm/types"

// EvalBatch evaluates e over rows into out (len(out) >= len(rows)),
// stopping at the first error, which it returns together with the index of
// the failing row in FailedRow.
//
// NB: this is a row-at-a-time loop; the vectorized form (column kernels
// over a selection vector) is Program in vector.go, used by op.Filter and
// op.Map.
func EvalBatch(env *Env, e Expr, rows []types.Row, out []types.Datum) error {
	for i, row := range rows {
		v, err := e.Eval(env, row)
		if err != nil {
			return &BatchError{Row: i, Err: err}
		}
		out[i] = v
	}
	return nil
}

// BatchError reports which row of a batch failed.
type BatchError struct {
	Row int
	Err error
}

func (b *BatchError) Error() string { return b.Err.Error() }
func (b *BatchError) Unwrap() error { return b.Err }

// FilterBatch appends to sel the indexes of rows for which the predicate is
// true (NULL and false drop the row), for WHERE clauses.
func FilterBatch(env *Env, pred Expr, rows []types.Row, sel []int) ([]int, error) {
	for i, row := range rows {
		v, err := pred.Eval(env, row)
		if err != nil {
			return sel, &BatchError{Row: i, Err: err}
		}
		if v == true {
			sel = append(sel, i)
		}
	}
	return sel, nil
}
