package ddl

import (
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// CreateSequence is CREATE SEQUENCE [IF NOT EXISTS] name [options].
type CreateSequence struct {
	Name        string
	IfNotExists bool
	Sequence    catalog.Sequence
	// OwnedBy is OWNED BY table.column ("" table: none).
	OwnedByTable, OwnedByColumn string
}

// AlterSequence is ALTER SEQUENCE [IF EXISTS] name RESTART [[WITH] n]
// (the only ALTER SEQUENCE form supported).
type AlterSequence struct {
	Name     string
	IfExists bool
	// Restart is the value the next nextval returns; nil: the start value.
	Restart *int64
}

// ColumnSequence is the sequence a serial or identity column of CREATE
// TABLE needs; the engine names it (<table>_<column>_seq) and points the
// column's default at it.
type ColumnSequence struct {
	Column int
	// Identity is "a" (GENERATED ALWAYS), "d" (BY DEFAULT) or "" (serial).
	Identity string
	Sequence catalog.Sequence
}

func (*CreateSequence) ddl() {}
func (*AlterSequence) ddl()  {}

// SequenceFunctions are the functions whose first argument names a sequence.
func isSequenceFunction(name string) bool {
	switch name {
	case "nextval", "currval", "setval":
		return true
	}
	return false
}

// serialType maps smallserial/serial/bigserial to their integer type.
func serialType(tn *pg_query.TypeName) (types.Type, bool) {
	if len(tn.Names) != 1 || len(tn.ArrayBounds) > 0 {
		return types.Type{}, false
	}
	switch tn.Names[0].GetString_().GetSval() {
	case "smallserial", "serial2":
		return types.TInt2, true
	case "serial", "serial4":
		return types.TInt4, true
	case "bigserial", "serial8":
		return types.TInt8, true
	}
	return types.Type{}, false
}

func (c *converter) createSequence(s *pg_query.CreateSeqStmt) (*CreateSequence, error) {
	name, err := c.relName(s.Sequence)
	if err != nil {
		return nil, err
	}
	out := &CreateSequence{Name: name, IfNotExists: s.IfNotExists}
	seq, owner, err := c.sequenceOptions(s.Options, types.TInt8, true)
	if err != nil {
		return nil, err
	}
	out.Sequence = seq
	if len(owner) == 2 {
		out.OwnedByTable, out.OwnedByColumn = owner[0], owner[1]
	}
	return out, nil
}

func (c *converter) alterSequence(s *pg_query.AlterSeqStmt) (*AlterSequence, error) {
	name, err := c.relName(s.Sequence)
	if err != nil {
		return nil, err
	}
	out := &AlterSequence{Name: name, IfExists: s.MissingOk}
	if len(s.Options) == 0 {
		return nil, c.unsupported(s.Sequence.Location, "ALTER SEQUENCE without RESTART")
	}
	for _, n := range s.Options {
		d := n.GetDefElem()
		if d == nil || d.Defname != "restart" {
			return nil, c.unsupported(s.Sequence.Location, "ALTER SEQUENCE "+strings.ToUpper(d.GetDefname())+" (only RESTART is supported)")
		}
		if d.Arg != nil {
			v, err := c.int64Option(d)
			if err != nil {
				return nil, err
			}
			out.Restart = &v
		}
	}
	return out, nil
}

// sequenceOptions applies CREATE SEQUENCE / identity options over
// PostgreSQL's defaults (init_params in sequence.c) and validates them with
// PostgreSQL's messages. owner is OWNED BY's name list (nil: none).
func (c *converter) sequenceOptions(opts []*pg_query.Node, typ types.Type, allowOwnedBy bool) (catalog.Sequence, []string, error) {
	seq := catalog.Sequence{Type: typ, Increment: 1, Cache: 1}
	var minSet, maxSet, startSet bool
	var owner []string
	bad := func(format string, args ...any) error {
		return errcode.New(errcode.SQLInvalidParameterValue, format, args...).WithSQLState("22023")
	}
	for _, n := range opts {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		var err error
		switch d.Defname {
		case "as":
			t, err := bind.ResolveTypeName(d.Arg.GetTypeName(), c.pos)
			if err != nil {
				return seq, nil, err
			}
			if t.Kind != types.KindInt2 && t.Kind != types.KindInt4 && t.Kind != types.KindInt8 {
				return seq, nil, bad("sequence type must be smallint, integer, or bigint")
			}
			seq.Type = t
		case "increment":
			seq.Increment, err = c.int64Option(d)
		case "minvalue":
			if d.Arg != nil {
				seq.Min, err = c.int64Option(d)
				minSet = true
			}
		case "maxvalue":
			if d.Arg != nil {
				seq.Max, err = c.int64Option(d)
				maxSet = true
			}
		case "start":
			seq.Start, err = c.int64Option(d)
			startSet = true
		case "cache":
			seq.Cache, err = c.int64Option(d)
		case "cycle":
			seq.Cycle = d.Arg == nil || d.Arg.GetBoolean().GetBoolval()
		case "owned_by":
			if !allowOwnedBy {
				return seq, nil, c.unsupported(d.Location, "OWNED BY in identity options")
			}
			for _, p := range d.Arg.GetList().GetItems() {
				owner = append(owner, p.GetString_().GetSval())
			}
			if len(owner) == 3 {
				owner = []string{catalog.Qualify(owner[0], owner[1]), owner[2]}
			}
			if len(owner) == 1 && owner[0] == "none" {
				owner = nil
			} else if len(owner) != 2 {
				return seq, nil, c.unsupported(d.Location, "OWNED BY "+strings.Join(owner, "."))
			}
		case "sequence_name":
			return seq, nil, c.unsupported(d.Location, "SEQUENCE NAME in identity options")
		default:
			return seq, nil, c.unsupported(d.Location, "sequence option "+strings.ToUpper(d.Defname))
		}
		if err != nil {
			return seq, nil, err
		}
	}
	if seq.Increment == 0 {
		return seq, nil, bad("INCREMENT must not be zero")
	}
	typeMin, typeMax := integerRange(seq.Type)
	if !maxSet {
		seq.Max = typeMax
		if seq.Increment < 0 {
			seq.Max = -1
		}
	} else if seq.Max < typeMin || seq.Max > typeMax {
		return seq, nil, bad("MAXVALUE (%d) is out of range for sequence data type %s", seq.Max, seq.Type.SQLName())
	}
	if !minSet {
		seq.Min = 1
		if seq.Increment < 0 {
			seq.Min = typeMin
		}
	} else if seq.Min < typeMin || seq.Min > typeMax {
		return seq, nil, bad("MINVALUE (%d) is out of range for sequence data type %s", seq.Min, seq.Type.SQLName())
	}
	if seq.Min >= seq.Max {
		return seq, nil, bad("MINVALUE (%d) must be less than MAXVALUE (%d)", seq.Min, seq.Max)
	}
	if !startSet {
		seq.Start = seq.Min
		if seq.Increment < 0 {
			seq.Start = seq.Max
		}
	}
	if seq.Start < seq.Min {
		return seq, nil, bad("START value (%d) cannot be less than MINVALUE (%d)", seq.Start, seq.Min)
	}
	if seq.Start > seq.Max {
		return seq, nil, bad("START value (%d) cannot be greater than MAXVALUE (%d)", seq.Start, seq.Max)
	}
	if seq.Cache <= 0 {
		return seq, nil, bad("CACHE (%d) must be greater than zero", seq.Cache)
	}
	return seq, owner, nil
}

// integerRange is the value range of an integer type.
func integerRange(t types.Type) (int64, int64) {
	switch t.Kind {
	case types.KindInt2:
		return math.MinInt16, math.MaxInt16
	case types.KindInt4:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func (c *converter) int64Option(d *pg_query.DefElem) (int64, error) {
	switch a := d.Arg.GetNode().(type) {
	case *pg_query.Node_Integer:
		return int64(a.Integer.Ival), nil
	case *pg_query.Node_Float:
		if v, err := strconv.ParseInt(a.Float.Fval, 10, 64); err == nil {
			return v, nil
		}
	}
	return 0, errcode.New(errcode.SQLInvalidParameterValue, "%s requires a bigint value", d.Defname).WithSQLState("22023").WithPosition(c.pos(d.Location))
}

// sequenceDefault normalizes a DEFAULT expression's sequence references as
// PostgreSQL stores them (nextval('s') → nextval('s'::regclass)) and
// returns the sequence names it references.
func sequenceDefault(n *pg_query.Node) []string {
	var names []string
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		if n == nil {
			return
		}
		switch x := n.Node.(type) {
		case *pg_query.Node_FuncCall:
			f := x.FuncCall
			if isSequenceFunction(lastName(f.Funcname)) && len(f.Args) > 0 {
				if lit := f.Args[0].GetAConst(); lit != nil && lit.GetSval() != nil {
					names = append(names, lit.GetSval().Sval)
					f.Args[0] = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
						Arg:      f.Args[0],
						TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("regclass")}, Typemod: -1, Location: -1},
						Location: -1,
					}}}
				} else if tc := f.Args[0].GetTypeCast(); tc != nil && tc.Arg.GetAConst().GetSval() != nil {
					names = append(names, tc.Arg.GetAConst().GetSval().Sval)
				}
			}
			for _, a := range f.Args {
				walk(a)
			}
		case *pg_query.Node_TypeCast:
			walk(x.TypeCast.Arg)
		case *pg_query.Node_AExpr:
			walk(x.AExpr.Lexpr)
			walk(x.AExpr.Rexpr)
		case *pg_query.Node_CoalesceExpr:
			for _, a := range x.CoalesceExpr.Args {
				walk(a)
			}
		}
	}
	walk(n)
	return names
}

func lastName(nodes []*pg_query.Node) string {
	if len(nodes) == 0 {
		return ""
	}
	return nodes[len(nodes)-1].GetString_().GetSval()
}

// identityColumn converts a GENERATED {ALWAYS|BY DEFAULT} AS IDENTITY
// constraint into the column's sequence.
func (c *converter) identityColumn(con *pg_query.Constraint, t types.Type) (*ColumnSequence, error) {
	if t.Kind != types.KindInt2 && t.Kind != types.KindInt4 && t.Kind != types.KindInt8 {
		return nil, errcode.New(errcode.SQLDatatypeMismatch, "identity column type must be smallint, integer, or bigint").WithSQLState("22023").WithPosition(c.pos(con.Location))
	}
	seq, _, err := c.sequenceOptions(con.Options, t, false)
	if err != nil {
		return nil, err
	}
	return &ColumnSequence{Identity: con.GeneratedWhen, Sequence: seq}, nil
}
