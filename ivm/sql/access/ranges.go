package access

import (
	"bytes"
	"slices"

	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/keyenc"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/lower"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// Key-range reads: a table scanned once under a Filter that bounds its
// leading primary-key columns (`id <= 10000`, `id BETWEEN 5 AND 9`, `a = 1
// AND b > 'x'`, `id IN (1, 2)`) is read in those key ranges only, not
// whole. As with point reads (points.go) the plan still runs unchanged
// over what was read, so a range that holds more rows than the Filter
// keeps is harmless; one that misses a row it keeps is not, so only
// comparisons in the column's own type are used, and only for types whose
// key encoding sorts as their comparison operators do.

// keyRangesMax bounds the ranges of one table (IN lists multiply them).
const keyRangesMax = 256

// keyRanges returns, per table that qualifies and is not read by points,
// the key ranges holding every row the plan can keep (tables absent from
// the map are read whole), and the tables read through an index.
//
// A table whose primary key the predicate does not bound is read through
// one of its indexes (cat lists those the store keeps) when the predicate
// bounds the index's leading columns the same way.
func keyRanges(n plan.Node, env *expr.Env, points map[catalog.ID][]types.Row, cat Catalog) (map[catalog.ID][]KeyRange, []string) {
	scans, ok := filteredScans(n)
	if !ok {
		return nil, nil
	}
	count := map[catalog.ID]int{}
	for _, fs := range scans {
		count[fs.rel.ID]++
	}
	var out map[catalog.ID][]KeyRange
	var using map[catalog.ID]indexUse
	for _, fs := range scans {
		rel := fs.rel
		if _, point := points[rel.ID]; point || count[rel.ID] != 1 || fs.pred == nil || len(rel.PrimaryKey) == 0 {
			continue
		}
		rs := rangesFromPredicate(rel, rel.PrimaryKey, fs.pred, fs.cols, env)
		if rs == nil && cat != nil {
			var idx *catalog.Relation
			if rs, idx = indexRanges(cat, rel, fs.pred, fs.cols, env); idx != nil {
				if using == nil {
					using = map[catalog.ID]indexUse{}
				}
				using[rel.ID] = indexUse{table: rel, index: idx}
			}
		}
		if rs != nil {
			if out == nil {
				out = map[catalog.ID][]KeyRange{}
			}
			out[rel.ID] = rs
		}
	}
	return out, indexScanLines(using)
}

// rangeable reports whether t's key encoding orders values as its
// comparison operators do (text: C collation, the only one).
func rangeable(t types.Type) bool {
	switch t.Kind {
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric,
		types.KindText, types.KindVarchar, types.KindDate,
		types.KindTimestamp, types.KindTimestampTZ, types.KindUUID, types.KindBool:
		return true
	}
	return false
}

// pkComparison is a conjunct `column op value` on one column of the table.
type pkComparison struct {
	col int // the table's column
	op  string
	val plan.Scalar
}

// comparisonOf returns c as a comparison of a table column with a
// row-free value of the column's type (the column on the left).
func comparisonOf(rel *catalog.Relation, c plan.Scalar, cols []int) (pkComparison, bool) {
	f, isFunc := c.(*plan.Func)
	if !isFunc || !f.Op || len(f.Args) != 2 {
		return pkComparison{}, false
	}
	flipped := map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
	if _, known := flipped[f.Name]; !known {
		return pkComparison{}, false
	}
	for side := 0; side < 2; side++ {
		col, isCol := f.Args[side].(*plan.ColRef)
		other := f.Args[1-side]
		if !isCol || col.Index >= len(cols) || !rowFree(other) {
			continue
		}
		k := cols[col.Index]
		t := rel.Columns[k].Type
		if !col.Typ.Equal(t) || !other.Type().Equal(t) {
			continue
		}
		op := f.Name
		if side == 1 {
			op = flipped[op]
		}
		return pkComparison{col: k, op: op, val: other}, true
	}
	return pkComparison{}, false
}

// evalFree evaluates a row-free value (ok false on an error or NULL: the
// conjunct then narrows nothing, and an error surfaces in the real run).
func evalFree(s plan.Scalar, env *expr.Env) (types.Datum, bool) {
	e, err := lower.Scalar(s)
	if err != nil {
		return nil, false
	}
	v, err := e.Eval(env, nil)
	if err != nil || v == nil {
		return nil, false
	}
	return v, true
}

// inValues returns the values of c when it is `col = v1 OR col = v2 ...`
// on table column k (NULLs dropped: they match no row).
func inValues(rel *catalog.Relation, c plan.Scalar, cols []int, k int, env *expr.Env) ([]types.Datum, bool) {
	b, isOr := c.(*plan.BoolOp)
	if !isOr || b.Op != plan.Or {
		return nil, false
	}
	var out []types.Datum
	for _, a := range b.Args {
		cmp, ok := comparisonOf(rel, a, cols)
		if !ok || cmp.col != k || cmp.op != "=" {
			return nil, false
		}
		e, err := lower.Scalar(cmp.val)
		if err != nil {
			return nil, false
		}
		v, err := e.Eval(env, nil)
		if err != nil {
			return nil, false
		}
		if v != nil {
			out = append(out, v)
		}
	}
	return out, true
}

// rangesFromPredicate returns the key ranges pred confines the table's
// rows to, or nil (read it whole): equalities (and IN lists) on leading
// key columns (keyCols: the primary key's, or an index's), then bounds on
// the next one.
func rangesFromPredicate(rel *catalog.Relation, keyCols []int, pred plan.Scalar, cols []int, env *expr.Env) []KeyRange {
	conj := plan.Conjuncts(pred)
	ranges := []KeyRange{{}}
	bounded := false
	for _, k := range keyCols {
		t := rel.Columns[k].Type
		if !rangeable(t) {
			break
		}
		var eq types.Datum
		var lo, hi []byte // encoded bounds, to keep the tightest
		var r KeyRange
		var in []types.Datum
		haveIn := false
		for _, c := range conj {
			if vs, ok := inValues(rel, c, cols, k, env); ok && !haveIn {
				in, haveIn = vs, true
				continue
			}
			cmp, ok := comparisonOf(rel, c, cols)
			if !ok || cmp.col != k {
				continue
			}
			v, ok := evalFree(cmp.val, env)
			if !ok {
				continue
			}
			enc := keyenc.EncodeColumn(nil, t, v, keyenc.Asc)
			switch cmp.op {
			case "=":
				if eq == nil {
					eq = v
				}
			case ">", ">=":
				if c := bytes.Compare(enc, lo); lo == nil || c > 0 || (c == 0 && cmp.op == ">") {
					lo, r.Lo, r.LoOpen = enc, v, cmp.op == ">"
				}
			case "<", "<=":
				if c := bytes.Compare(enc, hi); hi == nil || c < 0 || (c == 0 && cmp.op == "<") {
					hi, r.Hi, r.HiOpen = enc, v, cmp.op == "<"
				}
			}
		}
		if eq != nil {
			for i := range ranges {
				ranges[i].Eq = append(slices.Clip(ranges[i].Eq), eq)
			}
			bounded = true
			continue
		}
		if haveIn && len(ranges)*len(in) <= keyRangesMax {
			var next []KeyRange
			for _, kr := range ranges {
				for _, v := range in {
					next = append(next, KeyRange{Eq: append(slices.Clip(kr.Eq), v)})
				}
			}
			if len(next) > 0 { // `k IN (NULL)` keeps no row; read it whole
				ranges, bounded = next, true
				continue
			}
		}
		if r.Lo != nil || r.Hi != nil {
			for i := range ranges {
				ranges[i].Lo, ranges[i].Hi, ranges[i].LoOpen, ranges[i].HiOpen = r.Lo, r.Hi, r.LoOpen, r.HiOpen
			}
			bounded = true
		}
		break
	}
	if !bounded {
		return nil
	}
	return ranges
}

// indexRanges returns the ranges of the index of rel that pred bounds
// best (the most leading columns equal, then a bounded next column; a
// unique index before another) and that index, or nil.
func indexRanges(cat Catalog, rel *catalog.Relation, pred plan.Scalar, cols []int, env *expr.Env) ([]KeyRange, *catalog.Relation) {
	var best []KeyRange
	var bestIndex *catalog.Relation
	bestScore := 0
	for _, index := range cat.Indexes(rel) {
		idx, keyCols := index.Relation, index.Columns
		rs := rangesFromPredicate(rel, keyCols, pred, cols, env)
		if rs == nil {
			continue
		}
		score := 4 * len(rs[0].Eq)
		if rs[0].Lo != nil || rs[0].Hi != nil {
			score++
		}
		if idx.Index.Unique && len(rs[0].Eq) == len(keyCols) {
			score += 2
		}
		if score > bestScore {
			for i := range rs {
				rs[i].Index = idx.ID
			}
			best, bestIndex, bestScore = rs, idx, score
		}
	}
	return best, bestIndex
}
