package sql

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/ivm/sql/dist"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// ExplainQuery renders the ad-hoc plan of a query (EXPLAIN): the PlanIR
// tree the engine runs once, under the final Sort / Limit steps.
func ExplainQuery(q *Query) string {
	var b strings.Builder
	depth := 0
	line := func(s string) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(s)
		b.WriteString("\n")
		depth++
	}
	if q.Limit >= 0 || q.Offset > 0 {
		s := "Limit"
		if q.Limit >= 0 {
			s += fmt.Sprintf(" %d", q.Limit)
		}
		if q.Offset > 0 {
			s += fmt.Sprintf(" offset %d", q.Offset)
		}
		line(s)
	}
	if len(q.Order) > 0 {
		line("Sort " + sortText(q.Plan.Schema(), q.Order))
	}
	for _, l := range strings.Split(strings.TrimRight(plan.Format(q.Plan), "\n"), "\n") {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}

// ExplainDML renders an EXPLAINed UPDATE or DELETE: the statement on its
// table above the plan of the rows it changes.
func ExplainDML(d *ExplainedDML) string {
	var b strings.Builder
	b.WriteString(d.Verb + " on " + d.Table.Name + "\n")
	for _, l := range strings.Split(strings.TrimRight(plan.Format(d.Rows), "\n"), "\n") {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

func sortText(cols []plan.Column, keys []plan.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		s := cols[k.Col].Name
		if k.Desc {
			s += " DESC"
		}
		if k.NullsFirst != k.Desc {
			if k.NullsFirst {
				s += " NULLS FIRST"
			} else {
				s += " NULLS LAST"
			}
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// ExplainIncrementalText renders EXPLAIN INCREMENTAL in the human form of
// spec §14.8 level 1: the operator tree the view is maintained by, with
// exchange points, no internal ids. VERBOSE adds each operator's output
// columns and partitioning keys. Runtime statistics (lag, state size,
// epoch times) are the caller's to append per line.
func ExplainIncrementalText(e *ExplainIncremental) string {
	var b strings.Builder
	name := e.Name
	if name == "" {
		name = "(query)"
	}
	fmt.Fprintf(&b, "VIEW  %s\n", name)
	root := dist.Distribute(e.View.Plan)
	renderTree(&b, root, " ", true, e.Verbose)
	return b.String()
}

// renderTree draws n and its inputs with box-drawing branches.
func renderTree(b *strings.Builder, n plan.Node, prefix string, last, verbose bool) {
	branch, childPrefix := "├─ ", prefix+"│   "
	if last {
		branch, childPrefix = "└─ ", prefix+"    "
	}
	b.WriteString(prefix + branch + label(n))
	if verbose {
		cols := n.Schema()
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name + " " + c.Type.SQLName()
		}
		fmt.Fprintf(b, "  [columns: %s]", strings.Join(names, ", "))
	}
	b.WriteString("\n")
	ins := n.Inputs()
	for i, in := range ins {
		renderTree(b, in, childPrefix, i == len(ins)-1, verbose)
	}
}

// relationName names the single base relation under a chain of unary
// nodes, or "" when the subtree is not one relation.
func relationName(n plan.Node) string {
	for {
		switch x := n.(type) {
		case *plan.Scan:
			return x.Relation.Name
		case *plan.Filter, *plan.Project, *plan.Exchange:
			n = x.Inputs()[0]
		default:
			return ""
		}
	}
}

// aggArgs shows aggregate arguments as the expressions they project.
func aggCallText(a *plan.Aggregate, c plan.AggCall) string {
	input := a.Input
	for {
		e, ok := input.(*plan.Exchange)
		if !ok {
			break
		}
		input = e.Input
	}
	sub := func(s plan.Scalar) plan.Scalar {
		p, ok := input.(*plan.Project)
		if !ok {
			return s
		}
		return plan.Rewrite(s, func(x plan.Scalar) plan.Scalar {
			if r, ok := x.(*plan.ColRef); ok && r.Index < len(p.Exprs) {
				return p.Exprs[r.Index]
			}
			return x
		})
	}
	args := make([]string, len(c.Args))
	for i, x := range c.Args {
		args[i] = sub(x).String()
	}
	if len(c.Order) == 1 && (c.Func == "percentile_cont" || c.Func == "percentile_disc" || c.Func == "mode") {
		// An ordered-set aggregate: the last argument is its WITHIN GROUP key.
		key := args[len(args)-1]
		if c.Order[0].Desc {
			key += " DESC"
		}
		out := strings.ToUpper(c.Func) + "(" + strings.Join(args[:len(args)-1], ", ") + ") WITHIN GROUP (ORDER BY " + key + ")"
		if c.Filter != nil {
			out += " FILTER (WHERE " + sub(c.Filter).String() + ")"
		}
		return out
	}
	s := strings.Join(args, ", ")
	if len(c.Args) == 0 {
		s = "*"
	}
	if c.Distinct {
		s = "DISTINCT " + s
	}
	out := strings.ToUpper(c.Func) + "(" + s + ")"
	if c.Filter != nil {
		out += " FILTER (WHERE " + sub(c.Filter).String() + ")"
	}
	return out
}

func label(n plan.Node) string {
	switch x := n.(type) {
	case *plan.Scan:
		if x.Alias != "" && x.Alias != x.Relation.Name {
			return "SCAN  " + x.Relation.Name + " AS " + x.Alias
		}
		return "SCAN  " + x.Relation.Name
	case *plan.Values:
		return fmt.Sprintf("VALUES  %d rows", len(x.Rows))
	case *plan.Filter:
		return "FILTER  " + x.Pred.String()
	case *plan.TemporalFilter:
		return "TEMPORAL FILTER  " + x.String()
	case *plan.Project:
		parts := make([]string, len(x.Exprs))
		for i, e := range x.Exprs {
			s := e.String()
			if c, ok := e.(*plan.ColRef); !ok || c.Name != x.Cols[i].Name {
				s += " AS " + x.Cols[i].Name
			}
			parts[i] = s
		}
		return "PROJECT  " + strings.Join(parts, ", ")
	case *plan.Join:
		kind := map[plan.JoinKind]string{plan.InnerJoin: "JOIN", plan.LeftJoin: "LEFT JOIN", plan.RightJoin: "RIGHT JOIN",
			plan.FullJoin: "FULL JOIN", plan.SemiJoin: "SEMI JOIN", plan.AntiJoin: "ANTI JOIN"}[x.Kind]
		if x.NullAware {
			kind = "ANTI JOIN (NOT IN)"
		}
		l, r := relationName(x.Left), relationName(x.Right)
		if l == "" {
			l = "…"
		}
		if r == "" {
			r = "…"
		}
		var on []string
		lc, rc := x.Left.Schema(), x.Right.Schema()
		for _, k := range x.EquiKeys {
			if lc[k.Left].Name == rc[k.Right].Name {
				on = append(on, lc[k.Left].Name)
			} else {
				on = append(on, lc[k.Left].Name+" = "+rc[k.Right].Name)
			}
		}
		s := fmt.Sprintf("%s  %s ⋈ %s", kind, l, r)
		if len(on) > 0 {
			s += " ON " + strings.Join(on, ", ")
		}
		if x.Cond != nil {
			if len(on) > 0 {
				s += " AND " + x.Cond.String()
			} else {
				s += " ON " + x.Cond.String()
			}
		}
		return s
	case *plan.Aggregate:
		calls := make([]string, len(x.Aggs))
		for i, c := range x.Aggs {
			calls[i] = aggCallText(x, c)
		}
		s := "AGG  " + strings.Join(calls, ", ")
		if len(x.GroupBy) > 0 {
			in := x.Input.Schema()
			keys := make([]string, len(x.GroupBy))
			for i, g := range x.GroupBy {
				keys[i] = in[g].Name
				input := x.Input
				if e, ok := input.(*plan.Exchange); ok {
					input = e.Input
				}
				if p, ok := input.(*plan.Project); ok {
					keys[i] = p.Exprs[g].String()
				}
			}
			s += " GROUP BY " + strings.Join(keys, ", ")
		}
		return s
	case *plan.Distinct:
		if len(x.On) == 0 {
			return "DISTINCT"
		}
		cols := x.Schema()
		on := make([]string, len(x.On))
		for i, c := range x.On {
			on[i] = cols[c].Name
		}
		s := "DISTINCT ON (" + strings.Join(on, ", ") + ")"
		if len(x.Order) > 0 {
			s += " ORDER BY " + sortText(cols, x.Order)
		}
		return s
	case *plan.SetOp:
		s := strings.ToUpper(x.Kind.String())
		if x.All {
			s += " ALL"
		}
		return s
	case *plan.TopK:
		s := "TOPK"
		if len(x.Order) > 0 {
			s += "  ORDER BY " + sortText(x.Schema(), x.Order)
		}
		if x.Limit >= 0 {
			s += fmt.Sprintf(" LIMIT %d", x.Limit)
		}
		if x.Offset > 0 {
			s += fmt.Sprintf(" OFFSET %d", x.Offset)
		}
		return s
	case *plan.Window:
		in := x.Input.Schema()
		fs := make([]string, len(x.Funcs))
		for i, f := range x.Funcs {
			fs[i] = f.String()
		}
		s := "WINDOW  " + strings.Join(fs, ", ")
		if len(x.PartitionBy) > 0 {
			parts := make([]string, len(x.PartitionBy))
			for i, c := range x.PartitionBy {
				parts[i] = in[c].Name
			}
			s += "  PARTITION BY " + strings.Join(parts, ", ")
		}
		if len(x.Order) > 0 {
			s += "  ORDER BY " + sortText(in, x.Order)
		}
		if x.Limit >= 0 {
			s += fmt.Sprintf("  TOPK %d", x.Limit)
		}
		return s
	case *plan.Exchange:
		if x.Single {
			return "EXCHANGE  single"
		}
		cols := x.Schema()
		keys := make([]string, len(x.Keys))
		for i, k := range x.Keys {
			keys[i] = cols[k].Name
		}
		return "EXCHANGE  hash(" + strings.Join(keys, ", ") + ")"
	case *plan.ProjectSet:
		// Maintained as a flat-map: each changed row expands on its own.
		return "FLATMAP  " + strings.TrimPrefix(x.Describe(), "ProjectSet ")
	case *plan.FuncScan:
		return "FUNCTION  " + strings.TrimPrefix(x.Describe(), "FunctionScan ")
	case *plan.Session:
		return "SESSION  " + strings.TrimPrefix(x.Describe(), "Session ")
	case *plan.RecursiveUnion:
		s := "RECURSIVE  " + x.Work.Name + "  UNION"
		if x.All {
			s += " ALL"
		}
		// NB: the maintenance path (docs/sql.md, Recursive views): DRed,
		// a full re-derivation per epoch, or signed bag iteration.
		if mode, err := incr.RecursionMode(x); err == nil {
			s += "  fixpoint=" + mode.String()
		}
		return s
	}
	return strings.ToUpper(n.Describe())
}
