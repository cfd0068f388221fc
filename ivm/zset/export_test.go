package zset

import "github.com/rockstream/rockstream/ivm/types"

// StreamProjectForTest projects every row of b onto cols.
func StreamProjectForTest(cols []int, b Batch) Batch {
	out := Batch{Weights: b.Weights}
	for _, r := range b.Rows {
		p := make(types.Row, len(cols))
		for k, j := range cols {
			p[k] = r[j]
		}
		out.Rows = append(out.Rows, p)
	}
	return out
}
