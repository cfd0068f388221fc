package opt

import (
	"sort"

	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// ReorderJoins reorders each cluster of adjacent inner joins so that no
// cross product is built when a connected order exists. `FROM t1, t2, t3
// WHERE a1 = b3 AND a3 = b2` binds to (t1 × t2) ⋈ t3; after PushFilters
// every conjunct sits at the lowest join that sees all its columns, so the
// first join is a cross product. A cluster is a maximal tree of inner joins
// without equi-keys whose conditions are movable (no subqueries, volatile
// functions or outer references); its leaves are every other node (scans,
// filters, outer/semi/anti joins, aggregates...), reordered recursively on
// their own. Outer joins are never reordered across: they are leaves.
//
// The order is greedy and stable: it starts with the first leaf in FROM
// order and repeatedly adds the first leaf (in FROM order) that an equality
// conjunct connects to the leaves placed so far, else the first one any
// conjunct connects, else the next leaf (a cross product nobody can avoid).
// When that order is the FROM order the cluster keeps its shape. Otherwise
// it is rebuilt left-deep with each conjunct at the first join that sees
// all its columns, and a Project restores the original column order, so
// the result and the schema are unchanged (an inner-join cluster is the
// filtered cross product of its leaves, whatever the order).
func ReorderJoins(n plan.Node) plan.Node {
	if j, ok := n.(*plan.Join); ok && clusterJoin(j) {
		return reorderCluster(j)
	}
	return plan.MapInputs(n, ReorderJoins)
}

// clusterJoin reports whether j belongs to an inner-join cluster.
func clusterJoin(j *plan.Join) bool {
	if j.Kind != plan.InnerJoin || len(j.EquiKeys) > 0 || j.NullAware {
		return false
	}
	for _, c := range plan.Conjuncts(j.Cond) {
		if !movable(c) {
			return false
		}
	}
	return true
}

// joinLeaf is one input of a cluster: its node (already reordered inside)
// and the offset of its first column in the cluster's flat schema.
type joinLeaf struct {
	node   plan.Node
	offset int
	width  int
}

// joinConj is one conjunct of a cluster over the flat schema, with the set
// of leaves it reads.
type joinConj struct {
	expr   plan.Scalar
	leaves []int
	eq     bool
	used   bool
}

func reorderCluster(root *plan.Join) plan.Node {
	var leaves []joinLeaf
	var conjs []*joinConj
	var collect func(n plan.Node, offset int) plan.Node
	// collect gathers leaves and conjuncts and returns the cluster with its
	// leaves reordered inside (the shape kept when the order stays).
	collect = func(n plan.Node, offset int) plan.Node {
		j, ok := n.(*plan.Join)
		if !ok || !clusterJoin(j) {
			leaf := ReorderJoins(n)
			leaves = append(leaves, joinLeaf{node: leaf, offset: offset, width: len(n.Schema())})
			return leaf
		}
		nLeft := len(j.Left.Schema())
		l := collect(j.Left, offset)
		r := collect(j.Right, offset+nLeft)
		for _, c := range plan.Conjuncts(j.Cond) {
			conjs = append(conjs, &joinConj{expr: plan.RemapColumns(c, func(i int) int { return i + offset })})
		}
		if l == j.Left && r == j.Right {
			return j
		}
		return j.WithInputs([]plan.Node{l, r})
	}
	same := collect(root, 0)
	if len(leaves) < 3 {
		return same
	}
	leafOf := func(col int) int {
		for i, l := range leaves {
			if col >= l.offset && col < l.offset+l.width {
				return i
			}
		}
		return -1
	}
	for _, c := range conjs {
		seen := map[int]bool{}
		//lint:maprange leaf indexes are sorted below
		for col := range plan.ColumnsUsed(c.expr) {
			if li := leafOf(col); li >= 0 && !seen[li] {
				seen[li] = true
				c.leaves = append(c.leaves, li)
			}
		}
		sort.Ints(c.leaves)
		f, ok := c.expr.(*plan.Func)
		c.eq = ok && f.Op && f.Name == "=" && len(c.leaves) >= 2
	}
	order := greedyOrder(len(leaves), conjs)
	identity := true
	for i, li := range order {
		if li != i {
			identity = false
		}
	}
	if identity {
		return same
	}
	// Rebuild left-deep; pos maps a flat column to its position in acc.
	width := leaves[len(leaves)-1].offset + leaves[len(leaves)-1].width
	pos := make([]int, width)
	placed := make([]bool, len(leaves))
	var acc plan.Node
	accWidth := 0
	for step, li := range order {
		l := leaves[li]
		for k := 0; k < l.width; k++ {
			pos[l.offset+k] = accWidth + k
		}
		placed[li] = true
		if step == 0 {
			acc, accWidth = l.node, l.width
			continue
		}
		var cond []plan.Scalar
		for _, c := range conjs {
			if c.used || !allPlaced(c.leaves, placed) {
				continue
			}
			c.used = true
			cond = append(cond, plan.RemapColumns(c.expr, func(i int) int { return pos[i] }))
		}
		acc = &plan.Join{Kind: plan.InnerJoin, Left: acc, Right: l.node, Cond: plan.MakeAnd(cond)}
		accWidth += l.width
	}
	cols := root.Schema()
	accCols := acc.Schema()
	exprs := make([]plan.Scalar, len(cols))
	for i := range cols {
		exprs[i] = &plan.ColRef{Index: pos[i], Typ: accCols[pos[i]].Type, Name: accCols[pos[i]].Name}
	}
	return &plan.Project{Input: acc, Exprs: exprs, Cols: cols}
}

// greedyOrder picks the join order of n leaves (see ReorderJoins).
func greedyOrder(n int, conjs []*joinConj) []int {
	placed := make([]bool, n)
	order := []int{0}
	placed[0] = true
	// connects reports whether c joins leaf cand to the placed leaves.
	connects := func(c *joinConj, cand int) bool {
		hasCand, hasPlaced := false, false
		for _, li := range c.leaves {
			switch {
			case li == cand:
				hasCand = true
			case placed[li]:
				hasPlaced = true
			default:
				return false
			}
		}
		return hasCand && hasPlaced
	}
	for len(order) < n {
		next := -1
		for _, wantEq := range []bool{true, false} {
			for cand := 0; cand < n && next < 0; cand++ {
				if placed[cand] {
					continue
				}
				for _, c := range conjs {
					if (!wantEq || c.eq) && connects(c, cand) {
						next = cand
						break
					}
				}
			}
			if next >= 0 {
				break
			}
		}
		if next < 0 {
			for cand := 0; cand < n; cand++ {
				if !placed[cand] {
					next = cand
					break
				}
			}
		}
		placed[next] = true
		order = append(order, next)
	}
	return order
}

func allPlaced(leaves []int, placed []bool) bool {
	for _, li := range leaves {
		if !placed[li] {
			return false
		}
	}
	return true
}
