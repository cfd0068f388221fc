package bind

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// sequenceArgs drops the regclass cast of a literal sequence name in
// nextval/currval/setval ('s'::regclass, as column defaults store it):
// text → regclass needs the catalog, which the engine consults when the
// function runs, so the name is passed as text.
func sequenceArgs(name string, args []*pg_query.Node) []*pg_query.Node {
	switch name {
	case "nextval", "currval", "setval":
	default:
		return args
	}
	if len(args) == 0 {
		return args
	}
	tc := args[0].GetTypeCast()
	if tc == nil || tc.Arg.GetAConst().GetSval() == nil || funcName(tc.TypeName.GetNames()) != "regclass" {
		return args
	}
	if _, err := strconv.ParseInt(tc.Arg.GetAConst().GetSval().Sval, 10, 64); err == nil {
		return args // an oid ('16390'::regclass): the regclass overload takes it
	}
	out := append([]*pg_query.Node{tc.Arg}, args[1:]...)
	return out
}

// checkGeneratedAlways rejects an explicit value for a GENERATED ALWAYS AS
// IDENTITY column (PostgreSQL: 428C9) unless OVERRIDING SYSTEM VALUE.
func checkGeneratedAlways(rel *catalog.Relation, col int, override pg_query.OverridingKind) error {
	c := rel.Columns[col]
	if c.Identity != "a" || override == pg_query.OverridingKind_OVERRIDING_SYSTEM_VALUE {
		return nil
	}
	return errcode.New(errcode.GeneratedAlways, "cannot insert a non-DEFAULT value into column \"%s\"", c.Name).
		WithDetail("Column \"%s\" is an identity column defined as GENERATED ALWAYS.", c.Name)
}
