package incr

import (
	"fmt"

	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/op"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
)

// recursive lowers WITH RECURSIVE into a circuit.Recursive node. The
// non-recursive term is built in the outer circuit. So is every maximal
// subtree of the recursive term that does not read the recursive relation
// (the edges table, a join of two base tables, a VALUES list): those are
// invariants of the iteration, built once and fed to the step as deltas.
// What is left, the part between the recursive reference and the term's
// output, is built into the step's own builder:
//
//	WITH RECURSIVE tc(a, b) AS (SELECT src, dst FROM e
//	  UNION SELECT tc.a, e.dst FROM tc JOIN e ON tc.b = e.src)
//
//	outer:  source e ─► project ─► recursive dred ◄── source e (invariant 1)
//	step:   source 0 (tc) ─┐
//	                       join ─► project ─► (step output)
//	        source 1 (e) ──┘
func (w *builder) recursive(x *plan.RecursiveUnion) (circuit.Node, error) {
	mode, err := RecursionMode(x)
	if err != nil {
		return circuit.Node{}, err
	}
	init, err := w.node(x.Init)
	if err != nil {
		return circuit.Node{}, err
	}
	step := circuit.NewBuilder()
	var invariants []circuit.Node
	var work circuit.Node
	sw := &builder{b: step, srcs: NewSources(func(*catalog.Relation) circuit.SourceID { return 0 }), lower: w.lower}
	sw.intercept = func(n plan.Node) (circuit.Node, bool, error) {
		if s, ok := n.(*plan.Scan); ok && s.Relation.ID == x.Work.ID {
			if !work.Valid() {
				work = step.Source(circuit.RecursiveWorkSource, schemaOf(x.Cols))
			}
			return work, true, nil
		}
		if plan.ScansRelation(n, x.Work) {
			return circuit.Node{}, false, nil
		}
		inv, err := w.node(n)
		if err != nil {
			return circuit.Node{}, true, err
		}
		invariants = append(invariants, inv)
		return step.Source(circuit.SourceID(len(invariants)), schemaOf(n.Schema())), true, nil
	}
	out, err := sw.node(x.Step)
	if err != nil {
		return circuit.Node{}, err
	}
	return w.b.Recursive(init, invariants, step, out, op.RecursiveSpec{Name: x.Work.Name, Mode: mode}), nil
}

// RecursionMode says how a recursive CTE is maintained (op.RecursiveMode)
// or why it cannot be: UNION ALL needs a step linear in the recursive
// relation (it is summed round by round, signed); UNION takes DRed when
// every operator on the way from the recursive reference to the step's
// output counts derivations, else it is recomputed each epoch. Constructs
// PostgreSQL refuses in a recursive term are refused by name.
func RecursionMode(x *plan.RecursiveUnion) (op.RecursiveMode, error) {
	c := recursionClass{work: x.Work, name: x.Work.Name, counting: true, linear: true}
	if err := c.walk(x.Step); err != nil {
		return 0, err
	}
	switch {
	case x.All && !c.linear:
		return 0, unsupported(fmt.Sprintf("a UNION ALL recursive term that reads \"%s\" more than once (non-linear recursion needs UNION)", c.name))
	case x.All && c.bagUnsafe != "":
		return 0, unsupported(fmt.Sprintf("%s in the recursive term of UNION ALL recursion \"%s\"", c.bagUnsafe, c.name))
	case x.All:
		return op.RecursiveBag, nil
	case c.counting:
		return op.RecursiveSetDRed, nil
	}
	return op.RecursiveSetRecompute, nil
}

// recursionClass collects what the operators between the recursive
// reference and the step's output do to derivations.
type recursionClass struct {
	work *catalog.Relation
	name string
	// counting: every operator keeps one output row per derivation.
	counting bool
	// linear: no operator combines two rows of the recursive relation.
	linear bool
	// bagUnsafe names the first operator on the path that is not
	// weight-linear (DISTINCT, UNION): fine for sets, not for bags.
	bagUnsafe string
}

func (c *recursionClass) refuse(what string) error {
	return unsupported(fmt.Sprintf("%s in the recursive term of \"%s\"", what, c.name))
}

func (c *recursionClass) reads(n plan.Node) bool { return plan.ScansRelation(n, c.work) }

func (c *recursionClass) walk(n plan.Node) error {
	if !c.reads(n) {
		return nil
	}
	switch x := n.(type) {
	case *plan.Scan, *plan.Filter, *plan.Project, *plan.Exchange:
	case *plan.ProjectSet:
		// A function in FROM over the recursive rows expands each row on
		// its own: linear, and one output row per derivation.
	case *plan.Join:
		l, r := c.reads(x.Left), c.reads(x.Right)
		switch {
		case x.Kind == plan.InnerJoin:
			if l && r {
				c.linear = false
			}
		case (x.Kind == plan.SemiJoin || x.Kind == plan.AntiJoin) && r:
			return c.refuse("a subquery reading the recursive reference")
		case x.Kind == plan.SemiJoin:
		case x.Kind == plan.AntiJoin, x.Kind == plan.LeftJoin && !r, x.Kind == plan.RightJoin && !l:
			// NB: linear in the recursive relation, but not monotone in
			// the other side (a new match retracts a row), so a gained
			// derivation could hide a lost one: no DRed.
			c.counting = false
		default:
			return c.refuse("an outer join with the recursive reference on its nullable side")
		}
	case *plan.SetOp:
		switch {
		case x.Kind == plan.Union && x.All:
		case x.Kind == plan.Union:
			c.counting = false
			c.noteBagUnsafe("UNION")
		default:
			return c.refuse(x.Kind.String())
		}
	case *plan.Distinct:
		if len(x.On) > 0 {
			return c.refuse("DISTINCT ON")
		}
		c.counting = false
		c.noteBagUnsafe("DISTINCT")
	case *plan.Aggregate:
		name := "GROUP BY"
		if len(x.Aggs) > 0 {
			name = "aggregate function " + x.Aggs[0].Func + "()"
		}
		return c.refuse(name)
	case *plan.Window:
		return c.refuse("window functions")
	case *plan.Session:
		return c.refuse("SESSION windows")
	case *plan.TopK:
		return c.refuse("ORDER BY/LIMIT")
	case *plan.RecursiveUnion:
		return c.refuse("a recursive query reading the outer recursive reference")
	default:
		return c.refuse(fmt.Sprintf("plan node %T", n))
	}
	for _, in := range n.Inputs() {
		if err := c.walk(in); err != nil {
			return err
		}
	}
	return nil
}

func (c *recursionClass) noteBagUnsafe(what string) {
	if c.bagUnsafe == "" {
		c.bagUnsafe = what
	}
}
