package access

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Lookup joins: `SELECT … FROM orders o JOIN customers c ON c.id =
// o.customer_id WHERE o.id = 42` reads orders by key (points.go); the rows
// of customers that can join are those whose id is a customer_id of the
// orders read, so customers is read at those keys only, once orders has
// been read. The plan still runs unchanged over what was read: the join
// finds every row it can match, and a row of customers that matches no
// order changes nothing above the join.
//
// The looked-up table (the inner side) must be scanned once, below the
// join through filters and projections only, on the side whose unmatched
// rows the join drops (either side of an inner or semi join, the nullable
// side of an outer join, the right side of an anti join); the join's
// equalities must reach its primary key or the leading columns of an
// index from columns of a table already read in part (the driving side,
// through filters, projections and joins, which pass values on or make
// them NULL), in the same type, one whose key encoding is equal exactly
// when its values are. A looked-up table may drive the next lookup.

// LookupMax bounds the distinct join values of one lookup: with more, the
// table is read whole.
const LookupMax = 1000

// Lookup reads Table only at the rows whose key columns equal the join
// columns of a row read of Driver (a table read by keys or in ranges, or
// looked up by an earlier Lookup).
type Lookup struct {
	Table *catalog.Relation
	// Index is the index read through (zero: the primary key).
	Index catalog.ID
	// Driver is the table whose rows give the values; DriverCols are its
	// columns, one per leading key column of the index or primary key.
	Driver     *catalog.Relation
	DriverCols []int
}

// Ranges returns the key ranges of l.Table holding every row that joins a
// row of driver (rows of l.Driver as read), one per distinct non-NULL
// tuple of their join columns in first-seen order; ok is false when they
// are more than LookupMax (read the table whole).
func (l Lookup) Ranges(driver []types.Row) (rs []KeyRange, ok bool) {
	seen := map[string]bool{}
	var buf []byte
	for _, r := range driver {
		buf = buf[:0]
		key := make(types.Row, 0, len(l.DriverCols))
		for _, c := range l.DriverCols {
			if r[c] == nil {
				key = nil
				break
			}
			buf = keyenc.EncodeColumn(buf, l.Driver.Columns[c].Type, r[c], keyenc.Asc)
			key = append(key, r[c])
		}
		if key == nil || seen[string(buf)] {
			continue
		}
		if len(rs) == LookupMax {
			return nil, false
		}
		seen[string(buf)] = true
		rs = append(rs, KeyRange{Index: l.Index, Eq: key})
	}
	return rs, true
}

// origin is where a column of a plan node's output comes from: a column
// of the table a scan reads.
type origin struct {
	scan *plan.Scan
	col  int
}

// originOf traces column col of n down to the table column it is a copy
// of (ok false: computed). Through joins only if throughJoins: a join's
// output column holds its input's value or NULL.
func originOf(n plan.Node, col int, throughJoins bool) (origin, bool) {
	for {
		switch x := n.(type) {
		case *plan.Scan:
			if x.Relation.Kind != catalog.KindTable || len(x.Cols) != len(x.Relation.Columns) || col >= len(x.Cols) {
				return origin{}, false
			}
			return origin{scan: x, col: col}, true
		case *plan.Filter:
			n = x.Input
		case *plan.Project:
			ref, plain := asText(x.Exprs[col]).(*plan.ColRef)
			if !plain {
				return origin{}, false
			}
			n, col = x.Input, ref.Index
		case *plan.Join:
			if !throughJoins {
				return origin{}, false
			}
			if w := len(x.Left.Schema()); col >= w {
				n, col = x.Right, col-w
			} else {
				n = x.Left
			}
		default:
			return origin{}, false
		}
	}
}

// asText sees through the cast of a varchar to text (varchars compare as
// text: the same values, in the same order).
func asText(s plan.Scalar) plan.Scalar {
	c, ok := s.(*plan.Cast)
	if !ok || c.Typ.Kind != types.KindText {
		return s
	}
	if ref, ok := c.Arg.(*plan.ColRef); ok && ref.Typ.Kind == types.KindVarchar {
		return ref
	}
	return s
}

// lookupSide reports whether the join drops the rows of its side right
// (else left) that match no row of the other side.
func lookupSide(j *plan.Join, right bool) bool {
	switch j.Kind {
	case plan.InnerJoin, plan.SemiJoin:
		return true
	case plan.LeftJoin:
		return right
	case plan.AntiJoin:
		return right && !j.NullAware
	case plan.RightJoin:
		return !right
	}
	return false
}

// lookups chooses the lookup joins of n: read holds the tables read by
// keys or in ranges. It returns them in the order to read them and
// EXPLAIN's lines for them.
func lookups(n plan.Node, scans []filteredScan, read map[catalog.ID]bool, cat Catalog) ([]Lookup, []string) {
	count := map[catalog.ID]int{}
	for _, fs := range scans {
		count[fs.rel.ID]++
	}
	var joins []*plan.Join
	var collect func(n plan.Node)
	collect = func(n plan.Node) {
		if j, ok := n.(*plan.Join); ok {
			joins = append(joins, j)
		}
		for _, in := range n.Inputs() {
			collect(in)
		}
	}
	collect(n)
	var out []Lookup
	var lines []string
	for found := true; found; {
		found = false
		for _, j := range joins {
			for _, right := range []bool{true, false} {
				if !lookupSide(j, right) {
					continue
				}
				if l, line, ok := lookupOf(j, right, count, read, cat); ok {
					out = append(out, l)
					lines = append(lines, line)
					read[l.Table.ID] = true
					found = true
				}
			}
		}
	}
	slices.Sort(lines)
	return out, lines
}

// lookupOf returns the lookup of join j's right (else left) side, if it
// has one.
func lookupOf(j *plan.Join, right bool, count map[catalog.ID]int, read map[catalog.ID]bool, cat Catalog) (Lookup, string, bool) {
	inner, outer := j.Left, j.Right
	if right {
		inner, outer = j.Right, j.Left
	}
	// byDriver maps, per driving scan, each column of the looked-up table
	// to the driving column it equals.
	var table *plan.Scan
	var drivers []*plan.Scan
	byDriver := map[*plan.Scan]map[int]int{}
	for _, k := range j.EquiKeys {
		if k.NullSafe {
			continue // NULL matches NULL: NULL keys are not looked up
		}
		ic, oc := k.Right, k.Left
		if !right {
			ic, oc = k.Left, k.Right
		}
		in, ok := originOf(inner, ic, false)
		if !ok || (table != nil && in.scan != table) {
			continue
		}
		out, ok := originOf(outer, oc, true)
		if !ok || !read[out.scan.Relation.ID] {
			continue
		}
		t := in.scan.Relation.Columns[in.col].Type
		if !rangeable(t) || !t.Equal(out.scan.Relation.Columns[out.col].Type) {
			continue
		}
		table = in.scan
		m := byDriver[out.scan]
		if m == nil {
			m = map[int]int{}
			byDriver[out.scan] = m
			drivers = append(drivers, out.scan)
		}
		if _, dup := m[in.col]; !dup {
			m[in.col] = out.col
		}
	}
	if table == nil {
		return Lookup{}, "", false
	}
	rel := table.Relation
	if read[rel.ID] || count[rel.ID] != 1 || len(rel.PrimaryKey) == 0 {
		return Lookup{}, "", false
	}
	// The best key: the most leading columns pinned, the primary key or a
	// unique index pinned whole first, the primary key before an index.
	type choice struct {
		driver *plan.Scan
		index  catalog.ID
		name   string
		cols   []int // the key columns pinned
		dcols  []int // the driving columns they equal
		score  int
	}
	var best choice
	for _, d := range drivers {
		m := byDriver[d]
		consider := func(index catalog.ID, name string, keyCols []int, unique bool) {
			var dcols []int
			for _, k := range keyCols {
				dc, ok := m[k]
				if !ok {
					break
				}
				dcols = append(dcols, dc)
			}
			if len(dcols) == 0 {
				return
			}
			score := 4 * len(dcols)
			if unique && len(dcols) == len(keyCols) {
				score += 2
			}
			if index == (catalog.ID{}) {
				score++
			}
			if score > best.score {
				best = choice{driver: d, index: index, name: name, cols: keyCols[:len(dcols)], dcols: dcols, score: score}
			}
		}
		consider(catalog.ID{}, rel.PrimaryKeyConstraint(), rel.PrimaryKey, true)
		if cat != nil {
			for _, idx := range cat.Indexes(rel) {
				consider(idx.Relation.ID, idx.Relation.Name, idx.Columns, idx.Relation.Index.Unique)
			}
		}
	}
	if best.score == 0 {
		return Lookup{}, "", false
	}
	var cond []string
	for i, k := range best.cols {
		cond = append(cond, fmt.Sprintf("%s = %s.%s", rel.Columns[k].Name, qualifier(best.driver), best.driver.Relation.Columns[best.dcols[i]].Name))
	}
	line := fmt.Sprintf("Index Scan using %s on %s\n  Index Cond: (%s)", best.name, scanName(table), strings.Join(cond, " AND "))
	return Lookup{Table: rel, Index: best.index, Driver: best.driver.Relation, DriverCols: best.dcols}, line, true
}

// scanName is how EXPLAIN names a scanned table: its name and alias.
func scanName(s *plan.Scan) string {
	if s.Alias != "" && s.Alias != s.Relation.Name {
		return s.Relation.Name + " " + s.Alias
	}
	return s.Relation.Name
}

// qualifier is how EXPLAIN qualifies a scanned table's columns.
func qualifier(s *plan.Scan) string {
	if s.Alias != "" {
		return s.Alias
	}
	return s.Relation.Name
}
