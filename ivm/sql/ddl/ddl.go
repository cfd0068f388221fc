// Package ddl turns parsed DDL (pg_query trees and the front parser's
// CREATE SOURCE) into plain structs the control plane consumes: CREATE
// TABLE, CREATE [MATERIALIZED] VIEW, DROP, ALTER TABLE ADD COLUMN, CREATE
// SOURCE. Types are resolved (typmods included), defaults are type-checked
// and kept as SQL text, and everything RockStream does not support is
// rejected with a named error.
//
// Walkthrough:
//
//	st, _ := parse.ParseOne("CREATE TABLE t (id int PRIMARY KEY, v text DEFAULT 'x')")
//	d, err := ddl.Convert(st)   // d.(*ddl.CreateTable)
package ddl

import (
	"fmt"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/types"
)

// Statement is one converted DDL statement.
type Statement interface{ ddl() }

// CreateTable is CREATE TABLE.
type CreateTable struct {
	Name        string
	IfNotExists bool
	Columns     []catalog.Column
	// PrimaryKey lists column indexes (primary key columns are NOT NULL).
	PrimaryKey []int
	// InsertOnly is WITH (insert_only = true), implied by a watermark.
	InsertOnly bool
	// Watermark is WITH (watermark = 'ts - interval ''5 seconds''').
	Watermark *catalog.Watermark
	// LateRows names the dead-letter table of WITH (late_rows = 't') as
	// written (catalog.Qualify form); "" drops late rows. The engine
	// resolves it to Watermark.LateRows.
	LateRows string
	// Checks are the CHECK constraints (column- and table-level).
	Checks []catalog.Check
	// Sequences are the sequences serial and identity columns need.
	Sequences []ColumnSequence
	// SequenceRefs names the sequences DEFAULT expressions call
	// (nextval('s')): they must exist, and the table depends on them.
	SequenceRefs []string
}

// CreateView is CREATE [OR REPLACE] [MATERIALIZED] VIEW name [(cols)] AS query.
type CreateView struct {
	Name         string
	Materialized bool
	OrReplace    bool
	IfNotExists  bool
	// ColumnNames renames the query's output columns (may be shorter).
	ColumnNames []string
	// Query is the defining query's SQL text, as written.
	Query string
	// Options are the WITH (...) options, lower-case names, values as text.
	Options map[string]string
}

// DropKind is what a DROP statement drops.
type DropKind uint8

// Drop kinds.
const (
	DropTable DropKind = iota + 1
	DropView
	DropMaterializedView
	DropSource
	DropSequence
	DropSink
	DropIndex
)

// Drop is DROP TABLE/VIEW/MATERIALIZED VIEW/SOURCE.
type Drop struct {
	Kind     DropKind
	Names    []string
	IfExists bool
	Cascade  bool
	// Concurrently is DROP INDEX CONCURRENTLY (refused in a transaction
	// block, as in PostgreSQL).
	Concurrently bool
}

// AddColumn is ALTER TABLE name ADD [COLUMN] [IF NOT EXISTS] coldef.
type AddColumn struct {
	Table       string
	IfNotExists bool
	Column      catalog.Column
}

// AddPrimaryKey is ALTER TABLE name ADD [CONSTRAINT c] PRIMARY KEY (cols).
type AddPrimaryKey struct {
	Table string
	// Columns are the key's column names, in key order.
	Columns []string
	// Name is the constraint's name ("" = PostgreSQL's default, table_pkey).
	Name string
}

// CreateSource is CREATE SOURCE name FROM GENERATE ROWS (spec §13.5.0),
// with column types resolved.
type CreateSource struct {
	Name          string
	Columns       []SourceColumn
	RatePerSecond int64
	// Nexmark is set for FROM NEXMARK sources (Columns then carry no
	// generators).
	Nexmark *NexmarkSource
	// Postgres is set for FROM POSTGRES sources: their tables are
	// discovered upstream at CREATE (Columns is empty).
	Postgres *PostgresSource
	// Kafka is set for FROM KAFKA sources (Columns is empty: the
	// declared columns are Kafka.Columns).
	Kafka *KafkaSource
	// Watermark is a NEXMARK source's watermark option (as CREATE
	// TABLE's).
	Watermark *catalog.Watermark
}

// SourceColumn is one generated column.
type SourceColumn struct {
	Column    catalog.Column
	Generator parse.GeneratorKind
	Args      []parse.Literal
}

// Rename is ALTER {TABLE | VIEW | MATERIALIZED VIEW} [IF EXISTS] name
// RENAME TO new_name.
type Rename struct {
	Kind          catalog.Kind
	Name, NewName string
	IfExists      bool
}

// Recompile is ALTER MATERIALIZED VIEW name RECOMPILE.
type Recompile struct {
	Name string
}

// SetViewOptions is ALTER MATERIALIZED VIEW name SET (option = value, …)
// or RESET (option, …): Reset lists the options put back to their
// defaults.
type SetViewOptions struct {
	Name    string
	Options map[string]string
	Reset   []string
}

// SetLateRows is ALTER TABLE name SET (late_rows = 'drop' | 'table') or
// RESET (late_rows): where a watermarked table's late rows go from now on.
type SetLateRows struct {
	Name string
	// LateRows names the dead-letter table as written (catalog.Qualify
	// form); "" drops late rows.
	LateRows string
}

func (*SetLateRows) ddl() {}

func (*Rename) ddl()         {}
func (*Recompile) ddl()      {}
func (*SetViewOptions) ddl() {}

func (*CreateTable) ddl()   {}
func (*CreateView) ddl()    {}
func (*Drop) ddl()          {}
func (*AddColumn) ddl()     {}
func (*AddPrimaryKey) ddl() {}
func (*CreateSource) ddl()  {}

// IsDDL reports whether a parsed statement is DDL that Convert handles.
func IsDDL(st parse.Statement) bool {
	switch st.(type) {
	case *parse.CreateSource, *parse.DropSource, *parse.RecompileView, *parse.CreateSink:
		return true
	}
	pg, ok := st.(*parse.PG)
	if !ok {
		return false
	}
	switch pg.Stmt.Node.(type) {
	case *pg_query.Node_CreateStmt, *pg_query.Node_ViewStmt, *pg_query.Node_CreateTableAsStmt,
		*pg_query.Node_DropStmt, *pg_query.Node_AlterTableStmt,
		*pg_query.Node_CreateSeqStmt, *pg_query.Node_AlterSeqStmt, *pg_query.Node_CreateSchemaStmt,
		*pg_query.Node_RenameStmt, *pg_query.Node_IndexStmt, *pg_query.Node_AlterObjectSchemaStmt:
		return true
	}
	return false
}

// Convert converts one DDL statement.
func Convert(st parse.Statement) (Statement, error) {
	if cs, ok := st.(*parse.CreateSource); ok {
		return createSource(cs)
	}
	if rv, ok := st.(*parse.RecompileView); ok {
		if len(rv.Name) == 2 {
			return &Recompile{Name: catalog.Qualify(rv.Name[0], rv.Name[1])}, nil
		}
		return &Recompile{Name: rv.Name.Last()}, nil
	}
	if cs, ok := st.(*parse.CreateSink); ok {
		return createSink(cs)
	}
	if ds, ok := st.(*parse.DropSource); ok {
		d := &Drop{Kind: DropSource, IfExists: ds.IfExists, Cascade: ds.Cascade}
		if ds.Sink {
			d.Kind = DropSink
		}
		for _, n := range ds.Names {
			d.Names = append(d.Names, n.Last())
		}
		return d, nil
	}
	pg, ok := st.(*parse.PG)
	if !ok {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "not a DDL statement")
	}
	c := &converter{src: pg.SQL}
	switch x := pg.Stmt.Node.(type) {
	case *pg_query.Node_CreateStmt:
		return c.createTable(x.CreateStmt)
	case *pg_query.Node_ViewStmt:
		return c.createView(x.ViewStmt)
	case *pg_query.Node_CreateTableAsStmt:
		return c.createMaterializedView(x.CreateTableAsStmt)
	case *pg_query.Node_DropStmt:
		return c.drop(x.DropStmt)
	case *pg_query.Node_AlterTableStmt:
		return c.alterTable(x.AlterTableStmt)
	case *pg_query.Node_CreateSeqStmt:
		return c.createSequence(x.CreateSeqStmt)
	case *pg_query.Node_AlterSeqStmt:
		return c.alterSequence(x.AlterSeqStmt)
	case *pg_query.Node_CreateSchemaStmt:
		return c.createSchema(x.CreateSchemaStmt)
	case *pg_query.Node_RenameStmt:
		return c.rename(x.RenameStmt)
	case *pg_query.Node_IndexStmt:
		return c.createIndex(x.IndexStmt)
	case *pg_query.Node_AlterObjectSchemaStmt:
		return nil, c.unsupported(-1, "ALTER ... SET SCHEMA (moving an object to another schema)")
	}
	return nil, errcode.New(errcode.SQLFeatureNotSupported, "statement %s is not supported", bind.StatementTag(pg.Stmt))
}

type converter struct {
	src string
	// table and checks collect CHECK constraints while converting CREATE TABLE.
	table  string
	checks []catalog.Check
	// sequences and sequenceRefs collect what serial/identity columns and
	// nextval() defaults need while converting CREATE TABLE.
	sequences    []ColumnSequence
	sequenceRefs []string
}

// crossDatabase is the error for a name qualified by a database.
func crossDatabase(what string) *errcode.Error {
	return errcode.New(errcode.SchemasNotSupported, "cross-database references are not implemented: %s", what).
		WithDetail("A namespace (database) is RockStream's unit of isolation; name objects as schema.name.").WithSQLState("0A000")
}

// addCheck records a CHECK constraint, named as PostgreSQL names it when
// the statement does not (<table>_<column>_check, <table>_check, then a
// number to make it unique).
func (c *converter) addCheck(con *pg_query.Constraint, column string) error {
	if c.table == "" {
		return c.unsupported(con.Location, "CHECK constraints in ALTER TABLE")
	}
	text, err := bind.DeparseExpr(con.RawExpr)
	if err != nil {
		return err
	}
	name := con.Conname
	if name == "" {
		base := c.table + "_check"
		if column != "" {
			base = c.table + "_" + column + "_check"
		}
		name = base
		for n := 1; c.hasCheck(name); n++ {
			name = fmt.Sprintf("%s%d", base, n)
		}
	}
	c.checks = append(c.checks, catalog.Check{Name: name, Expr: text})
	return nil
}

func (c *converter) hasCheck(name string) bool {
	for _, ch := range c.checks {
		if ch.Name == name {
			return true
		}
	}
	return false
}

func (c *converter) pos(loc int32) int {
	if loc < 0 {
		return 0
	}
	return parse.CharPosition(c.src, int(loc))
}

func (c *converter) unsupported(loc int32, what string) error {
	return errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support %s", what).WithPosition(c.pos(loc))
}

// relName validates a relation name and returns it as written
// (catalog.Qualify: schema-qualified or not; the engine resolves an
// unqualified name through the session's search_path).
func (c *converter) relName(rv *pg_query.RangeVar) (string, error) {
	if rv.Catalogname != "" {
		return "", crossDatabase(rv.Catalogname + "." + rv.Schemaname + "." + rv.Relname).WithPosition(c.pos(rv.Location))
	}
	if rv.Relpersistence == "t" {
		return "", c.unsupported(rv.Location, "TEMPORARY tables")
	}
	return catalog.Qualify(rv.Schemaname, rv.Relname), nil
}

// CreateSchema is CREATE SCHEMA [IF NOT EXISTS] name.
type CreateSchema struct {
	Name        string
	IfNotExists bool
}

// DropSchema is DROP SCHEMA [IF EXISTS] name, ... [CASCADE | RESTRICT].
type DropSchema struct {
	Names    []string
	IfExists bool
	Cascade  bool
}

func (*CreateSchema) ddl() {}
func (*DropSchema) ddl()   {}

func (c *converter) createSchema(s *pg_query.CreateSchemaStmt) (*CreateSchema, error) {
	if s.Authrole != nil {
		return nil, c.unsupported(-1, "CREATE SCHEMA ... AUTHORIZATION")
	}
	if len(s.SchemaElts) > 0 {
		return nil, c.unsupported(-1, "CREATE SCHEMA with schema elements (run each CREATE separately)")
	}
	return &CreateSchema{Name: s.Schemaname, IfNotExists: s.IfNotExists}, nil
}

func (c *converter) createTable(s *pg_query.CreateStmt) (*CreateTable, error) {
	name, err := c.relName(s.Relation)
	if err != nil {
		return nil, err
	}
	if len(s.InhRelations) > 0 || s.Partspec != nil || s.Partbound != nil || s.OfTypename != nil {
		return nil, c.unsupported(s.Relation.Location, "table inheritance, partitioning and typed tables")
	}
	t := &CreateTable{Name: name, IfNotExists: s.IfNotExists}
	c.table = name
	defer func() { t.Checks, t.Sequences, t.SequenceRefs = c.checks, c.sequences, c.sequenceRefs }()
	var tableConstraints []*pg_query.Constraint
	for _, e := range s.TableElts {
		switch x := e.Node.(type) {
		case *pg_query.Node_ColumnDef:
			col, pk, err := c.columnDef(x.ColumnDef)
			if err != nil {
				return nil, err
			}
			for _, prev := range t.Columns {
				if prev.Name == col.Name {
					return nil, errcode.New(errcode.SQLDuplicateColumn, "column \"%s\" specified more than once", col.Name).WithPosition(c.pos(x.ColumnDef.Location))
				}
			}
			if pk {
				if len(t.PrimaryKey) > 0 {
					return nil, errcode.New(errcode.SQLSemanticError, "multiple primary keys for table \"%s\" are not allowed", name).WithSQLState("42P16").WithPosition(c.pos(x.ColumnDef.Location))
				}
				t.PrimaryKey = []int{len(t.Columns)}
			}
			if n := len(c.sequences); n > 0 && c.sequences[n-1].Column < 0 {
				c.sequences[n-1].Column = len(t.Columns)
			}
			t.Columns = append(t.Columns, col)
		case *pg_query.Node_Constraint:
			tableConstraints = append(tableConstraints, x.Constraint)
		default:
			return nil, c.unsupported(-1, "LIKE in CREATE TABLE")
		}
	}
	for _, con := range append(tableConstraints, constraintsOf(s.Constraints)...) {
		switch con.Contype {
		case pg_query.ConstrType_CONSTR_PRIMARY:
			if len(t.PrimaryKey) > 0 {
				return nil, errcode.New(errcode.SQLSemanticError, "multiple primary keys for table \"%s\" are not allowed", name).WithSQLState("42P16").WithPosition(c.pos(con.Location))
			}
			for _, k := range con.Keys {
				kn := k.GetString_().GetSval()
				idx := -1
				for i, col := range t.Columns {
					if col.Name == kn {
						idx = i
					}
				}
				if idx < 0 {
					return nil, errcode.New(errcode.SQLUndefinedColumn, "column \"%s\" named in key does not exist", kn).WithPosition(c.pos(con.Location))
				}
				for _, prev := range t.PrimaryKey {
					if prev == idx {
						return nil, errcode.New(errcode.SQLDuplicateColumn, "column \"%s\" appears twice in primary key constraint", kn).WithPosition(c.pos(con.Location))
					}
				}
				t.PrimaryKey = append(t.PrimaryKey, idx)
			}
		case pg_query.ConstrType_CONSTR_CHECK:
			if err := c.addCheck(con, ""); err != nil {
				return nil, err
			}
		default:
			return nil, c.unsupported(con.Location, constraintName(con.Contype)+" constraints")
		}
	}
	for _, k := range t.PrimaryKey {
		t.Columns[k].NotNull = true
	}
	opts, err := c.options(s.Options)
	if err != nil {
		return nil, err
	}
	for _, k := range sortedKeys(opts) {
		switch k {
		case "insert_only":
			v, err := parseBoolOption(k, opts[k])
			if err != nil {
				return nil, err
			}
			t.InsertOnly = v
		case "watermark":
			if t.Watermark, err = watermarkOption(opts[k], t.Columns); err != nil {
				return nil, err
			}
		case "late_rows":
			if t.LateRows, err = LateRowsOption(opts[k]); err != nil {
				return nil, err
			}
		case "fillfactor":
			// PostgreSQL's heap page fill factor (pgbench -i sets 100):
			// checked for PostgreSQL's range, then ignored, because
			// RockStream's storage has no heap pages to leave room in.
			n, err := strconv.Atoi(opts[k])
			if err != nil || n < 10 || n > 100 {
				return nil, errcode.New(errcode.SQLInvalidParameterValue, "value %s out of bounds for option \"fillfactor\"", opts[k]).
					WithDetail("Valid values are between \"10\" and \"100\".").WithSQLState("22023")
			}
		default:
			return nil, errcode.New(errcode.SQLInvalidParameterValue, "unrecognized parameter \"%s\"", k).WithSQLState("22023")
		}
	}
	if t.InsertOnly && len(t.PrimaryKey) > 0 {
		return nil, errcode.New(errcode.SQLInvalidParameterValue, "an insert_only table cannot have a PRIMARY KEY").WithSQLState("22023")
	}
	if t.Watermark != nil {
		if len(t.PrimaryKey) > 0 {
			return nil, errcode.New(errcode.SQLInvalidParameterValue, "a table with a watermark cannot have a PRIMARY KEY").
				WithDetail("A table with a watermark is insert-only: rows behind the watermark can no longer change the windows they fell in.").WithSQLState("22023")
		}
		if _, ok := opts["insert_only"]; ok && !t.InsertOnly {
			return nil, errcode.New(errcode.SQLInvalidParameterValue, "a table with a watermark is insert-only").WithSQLState("22023")
		}
		t.InsertOnly = true
	}
	if _, ok := opts["late_rows"]; ok && t.Watermark == nil {
		return nil, errcode.New(errcode.LateRowsTableInvalid, "option \"late_rows\" needs a watermark").
			WithDetail("Only a table declared WITH (watermark = '...') has late rows.")
	}
	if len(t.Columns) == 0 {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "tables with no columns are not supported")
	}
	return t, nil
}

func constraintsOf(nodes []*pg_query.Node) []*pg_query.Constraint {
	var out []*pg_query.Constraint
	for _, n := range nodes {
		if c := n.GetConstraint(); c != nil {
			out = append(out, c)
		}
	}
	return out
}

func constraintName(t pg_query.ConstrType) string {
	switch t {
	case pg_query.ConstrType_CONSTR_CHECK:
		return "CHECK"
	case pg_query.ConstrType_CONSTR_UNIQUE:
		return "UNIQUE"
	case pg_query.ConstrType_CONSTR_FOREIGN:
		return "FOREIGN KEY"
	case pg_query.ConstrType_CONSTR_EXCLUSION:
		return "EXCLUDE"
	case pg_query.ConstrType_CONSTR_IDENTITY:
		return "GENERATED ... AS IDENTITY"
	case pg_query.ConstrType_CONSTR_GENERATED:
		return "GENERATED ... STORED"
	}
	return strings.TrimPrefix(t.String(), "CONSTR_")
}

// columnDef converts a column definition; pk reports a column-level
// PRIMARY KEY.
func (c *converter) columnDef(d *pg_query.ColumnDef) (col catalog.Column, pk bool, err error) {
	t, serial := serialType(d.TypeName)
	if !serial {
		if t, err = bind.ResolveTypeName(d.TypeName, c.pos); err != nil {
			return col, false, err
		}
	}
	col = catalog.Column{Name: d.Colname, Type: t, NotNull: d.IsNotNull || serial}
	var identity *ColumnSequence
	if serial {
		if c.table == "" {
			return col, false, c.unsupported(d.Location, "adding a serial column")
		}
		seq, _, err := c.sequenceOptions([]*pg_query.Node{{Node: &pg_query.Node_DefElem{DefElem: &pg_query.DefElem{Defname: "as", Arg: &pg_query.Node{Node: &pg_query.Node_TypeName{TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(t.SQLName())}, Typemod: -1}}}}}}}, t, false)
		if err != nil {
			return col, false, err
		}
		identity = &ColumnSequence{Column: -1, Sequence: seq}
	}
	if d.CollClause != nil {
		return col, false, c.unsupported(d.Location, "COLLATE")
	}
	defaultNode := d.RawDefault
	for _, cn := range d.Constraints {
		con := cn.GetConstraint()
		switch con.Contype {
		case pg_query.ConstrType_CONSTR_NOTNULL:
			col.NotNull = true
		case pg_query.ConstrType_CONSTR_NULL:
			col.NotNull = false
		case pg_query.ConstrType_CONSTR_DEFAULT:
			defaultNode = con.RawExpr
		case pg_query.ConstrType_CONSTR_PRIMARY:
			pk = true
		case pg_query.ConstrType_CONSTR_CHECK:
			if err := c.addCheck(con, d.Colname); err != nil {
				return col, false, err
			}
		case pg_query.ConstrType_CONSTR_IDENTITY:
			if c.table == "" {
				return col, false, c.unsupported(con.Location, "adding an identity column")
			}
			if identity != nil {
				return col, false, errcode.New(errcode.SQLSyntaxError, "multiple identity specifications for column \"%s\" of table \"%s\"", d.Colname, c.table).WithPosition(c.pos(con.Location))
			}
			if identity, err = c.identityColumn(con, t); err != nil {
				return col, false, err
			}
			identity.Column = -1
			col.NotNull = true
		case pg_query.ConstrType_CONSTR_ATTR_DEFERRABLE, pg_query.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE,
			pg_query.ConstrType_CONSTR_ATTR_DEFERRED, pg_query.ConstrType_CONSTR_ATTR_IMMEDIATE:
		default:
			return col, false, c.unsupported(con.Location, constraintName(con.Contype)+" constraints")
		}
	}
	if identity != nil {
		if defaultNode != nil {
			what := "identity"
			if serial {
				what = "serial"
			}
			return col, false, errcode.New(errcode.SQLSyntaxError, "multiple default values specified for column \"%s\" of table \"%s\"", d.Colname, c.table).
				WithDetail("a %s column has the default nextval() of its sequence", what).WithPosition(c.pos(d.Location))
		}
		col.Identity = identity.Identity
		c.sequences = append(c.sequences, *identity)
	}
	if defaultNode != nil {
		c.sequenceRefs = append(c.sequenceRefs, sequenceDefault(defaultNode)...)
		text, err := bind.DeparseExpr(defaultNode)
		if err != nil {
			return col, false, err
		}
		if _, err := bind.DefaultExpr(text, t, d.Colname); err != nil {
			return col, false, err
		}
		col.Default = text
	}
	return col, pk, nil
}

// options reads WITH (name = value, ...).
func (c *converter) options(nodes []*pg_query.Node) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range nodes {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		name := strings.ToLower(d.Defname)
		val := "true"
		if d.Arg != nil {
			switch a := d.Arg.Node.(type) {
			case *pg_query.Node_String_:
				val = a.String_.Sval
			case *pg_query.Node_Integer:
				val = strconv.Itoa(int(a.Integer.Ival))
			case *pg_query.Node_Float:
				val = a.Float.Fval
			case *pg_query.Node_Boolean:
				val = strconv.FormatBool(a.Boolean.Boolval)
			case *pg_query.Node_TypeName:
				val = funcNameOf(a.TypeName)
			default:
				return nil, errcode.New(errcode.SQLInvalidParameterValue, "invalid value for parameter \"%s\"", name).WithPosition(c.pos(d.Location))
			}
		}
		out[name] = val
	}
	return out, nil
}

func funcNameOf(tn *pg_query.TypeName) string {
	var parts []string
	for _, n := range tn.Names {
		parts = append(parts, n.GetString_().GetSval())
	}
	return strings.Join(parts, ".")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m { //lint:maprange sorted below
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func parseBoolOption(name, v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "on", "1", "yes":
		return true, nil
	case "false", "off", "0", "no":
		return false, nil
	}
	return false, errcode.New(errcode.SQLInvalidParameterValue, "invalid value for boolean option \"%s\": %s", name, v).WithSQLState("22023")
}

func (c *converter) createView(v *pg_query.ViewStmt) (*CreateView, error) {
	name, err := c.relName(v.View)
	if err != nil {
		return nil, err
	}
	if v.WithCheckOption != pg_query.ViewCheckOption_NO_CHECK_OPTION {
		return nil, c.unsupported(v.View.Location, "WITH CHECK OPTION")
	}
	q, err := c.queryText(v.View.Location)
	if err != nil {
		return nil, err
	}
	opts, err := c.options(v.Options)
	if err != nil {
		return nil, err
	}
	return &CreateView{Name: name, OrReplace: v.Replace, ColumnNames: aliasNames(v.Aliases), Query: q, Options: opts}, nil
}

func (c *converter) createMaterializedView(s *pg_query.CreateTableAsStmt) (*CreateView, error) {
	if s.Objtype != pg_query.ObjectType_OBJECT_MATVIEW {
		return nil, c.unsupported(-1, "CREATE TABLE AS")
	}
	name, err := c.relName(s.Into.Rel)
	if err != nil {
		return nil, err
	}
	if s.Into.SkipData {
		return nil, c.unsupported(s.Into.Rel.Location, "WITH NO DATA")
	}
	q, err := c.queryText(s.Into.Rel.Location)
	if err != nil {
		return nil, err
	}
	opts, err := c.options(s.Into.Options)
	if err != nil {
		return nil, err
	}
	return &CreateView{Name: name, Materialized: true, IfNotExists: s.IfNotExists, ColumnNames: aliasNames(s.Into.ColNames), Query: q, Options: opts}, nil
}

// queryText finds the defining query's text: everything after the first
// top-level AS following the view name, minus a trailing WITH [NO] DATA.
func (c *converter) queryText(nameLoc int32) (string, error) {
	toks := parse.Tokens(c.src)
	depth := 0
	for i, t := range toks {
		if t.Offset <= int(nameLoc) {
			continue
		}
		switch t.Text {
		case "(":
			depth++
		case ")":
			depth--
		case "as":
			if depth != 0 || !t.Word {
				continue
			}
			end := len(c.src)
			// Trailing WITH DATA / WITH NO DATA belongs to the DDL.
			n := len(toks)
			if n >= 2 && toks[n-1].Text == "data" && toks[n-2].Text == "with" {
				end = toks[n-2].Offset
			} else if n >= 3 && toks[n-1].Text == "data" && toks[n-2].Text == "no" && toks[n-3].Text == "with" {
				end = toks[n-3].Offset
			}
			if i+1 >= len(toks) {
				break
			}
			return strings.TrimSpace(c.src[toks[i+1].Offset:end]), nil
		}
	}
	return "", errcode.New(errcode.InternalError, "cannot locate the view's query in %q", c.src)
}

func aliasNames(nodes []*pg_query.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.GetString_().GetSval())
	}
	return out
}

func (c *converter) drop(d *pg_query.DropStmt) (Statement, error) {
	out := &Drop{IfExists: d.MissingOk, Cascade: d.Behavior == pg_query.DropBehavior_DROP_CASCADE, Concurrently: d.Concurrent}
	switch d.RemoveType {
	case pg_query.ObjectType_OBJECT_TABLE:
		out.Kind = DropTable
	case pg_query.ObjectType_OBJECT_VIEW:
		out.Kind = DropView
	case pg_query.ObjectType_OBJECT_MATVIEW:
		out.Kind = DropMaterializedView
	case pg_query.ObjectType_OBJECT_SEQUENCE:
		out.Kind = DropSequence
	case pg_query.ObjectType_OBJECT_INDEX:
		// DROP INDEX CONCURRENTLY is DROP INDEX: there is no index
		// structure to wait for.
		out.Kind = DropIndex
	case pg_query.ObjectType_OBJECT_SCHEMA:
		ds := &DropSchema{IfExists: out.IfExists, Cascade: out.Cascade}
		for _, o := range d.Objects {
			ds.Names = append(ds.Names, o.GetString_().GetSval())
		}
		return ds, nil
	default:
		return nil, c.unsupported(-1, "DROP "+strings.TrimPrefix(d.RemoveType.String(), "OBJECT_"))
	}
	for _, o := range d.Objects {
		var parts []string
		for _, p := range o.GetList().GetItems() {
			parts = append(parts, p.GetString_().GetSval())
		}
		switch len(parts) {
		case 1:
			out.Names = append(out.Names, parts[0])
		case 2:
			out.Names = append(out.Names, catalog.Qualify(parts[0], parts[1]))
		default:
			return nil, crossDatabase(strings.Join(parts, "."))
		}
	}
	return out, nil
}

func (c *converter) alterTable(a *pg_query.AlterTableStmt) (Statement, error) {
	name, err := c.relName(a.Relation)
	if err != nil {
		return nil, err
	}
	if len(a.Cmds) != 1 {
		return nil, c.unsupported(a.Relation.Location, "ALTER TABLE with several actions")
	}
	cmd := a.Cmds[0].GetAlterTableCmd()
	if cmd.Subtype == pg_query.AlterTableType_AT_SetRelOptions || cmd.Subtype == pg_query.AlterTableType_AT_ResetRelOptions {
		var defs []*pg_query.Node
		if l := cmd.Def.GetList(); l != nil {
			defs = l.Items
		}
		if a.Objtype == pg_query.ObjectType_OBJECT_TABLE {
			return c.setTableOptions(name, a, cmd, defs)
		}
		if a.Objtype != pg_query.ObjectType_OBJECT_MATVIEW {
			return nil, c.unsupported(a.Relation.Location, "storage parameters of views (SET/RESET (...) applies to materialized views and to a table's late_rows)")
		}
		out := &SetViewOptions{Name: name, Options: map[string]string{}}
		if cmd.Subtype == pg_query.AlterTableType_AT_ResetRelOptions {
			for _, n := range defs {
				if d := n.GetDefElem(); d != nil {
					out.Reset = append(out.Reset, strings.ToLower(d.Defname))
				}
			}
			return out, nil
		}
		if out.Options, err = c.options(defs); err != nil {
			return nil, err
		}
		return out, nil
	}
	if cmd.Subtype == pg_query.AlterTableType_AT_AddConstraint {
		return c.addConstraint(name, cmd)
	}
	if cmd.Subtype != pg_query.AlterTableType_AT_AddColumn {
		return nil, c.unsupported(a.Relation.Location, "ALTER TABLE "+words(strings.TrimPrefix(cmd.Subtype.String(), "AT_")))
	}
	def := cmd.Def.GetColumnDef()
	col, pk, err := c.columnDef(def)
	if err != nil {
		return nil, err
	}
	if pk {
		return nil, c.unsupported(def.Location, "adding a PRIMARY KEY column")
	}
	return &AddColumn{Table: name, IfNotExists: cmd.MissingOk, Column: col}, nil
}

// setTableOptions converts ALTER TABLE name SET (late_rows = ...) and
// RESET (late_rows), the one table option that can change; the others
// (watermark, insert_only, fillfactor) are refused by name.
func (c *converter) setTableOptions(name string, a *pg_query.AlterTableStmt, cmd *pg_query.AlterTableCmd, defs []*pg_query.Node) (Statement, error) {
	var names []string
	for _, n := range defs {
		if d := n.GetDefElem(); d != nil {
			names = append(names, strings.ToLower(d.Defname))
		}
	}
	for _, n := range names {
		if n != "late_rows" || len(names) != 1 {
			return nil, c.unsupported(a.Relation.Location, "ALTER TABLE SET/RESET ("+n+"): only late_rows can be changed")
		}
	}
	if len(names) == 0 {
		return nil, c.unsupported(a.Relation.Location, "ALTER TABLE SET/RESET ()")
	}
	if cmd.Subtype == pg_query.AlterTableType_AT_ResetRelOptions {
		return &SetLateRows{Name: name}, nil
	}
	opts, err := c.options(defs)
	if err != nil {
		return nil, err
	}
	dl, err := LateRowsOption(opts["late_rows"])
	if err != nil {
		return nil, err
	}
	return &SetLateRows{Name: name, LateRows: dl}, nil
}

// addConstraint converts ALTER TABLE ... ADD [CONSTRAINT c] PRIMARY KEY
// (cols); other constraints are refused by name.
func (c *converter) addConstraint(table string, cmd *pg_query.AlterTableCmd) (Statement, error) {
	con := cmd.Def.GetConstraint()
	if con == nil || con.Contype != pg_query.ConstrType_CONSTR_PRIMARY {
		what := "this constraint"
		if con != nil {
			what = constraintName(con.Contype) + " constraints"
		}
		return nil, c.unsupported(-1, "ALTER TABLE ADD "+what)
	}
	if con.Indexname != "" {
		return nil, c.unsupported(con.Location, "ADD PRIMARY KEY USING INDEX")
	}
	if len(con.Including) > 0 || len(con.Options) > 0 || con.Indexspace != "" {
		return nil, c.unsupported(con.Location, "PRIMARY KEY index options")
	}
	out := &AddPrimaryKey{Table: table, Name: con.Conname}
	for _, k := range con.Keys {
		kn := k.GetString_().GetSval()
		for _, prev := range out.Columns {
			if prev == kn {
				return nil, errcode.New(errcode.SQLDuplicateColumn, "column \"%s\" appears twice in primary key constraint", kn).WithPosition(c.pos(con.Location))
			}
		}
		out.Columns = append(out.Columns, kn)
	}
	return out, nil
}

// createSource resolves the generator source's column types.
func createSource(cs *parse.CreateSource) (*CreateSource, error) {
	name := cs.Name
	if len(name) == 2 && name[0] == "public" {
		name = name[1:]
	}
	if len(name) != 1 {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "RockStream does not support sources in a schema other than public: %s", strings.Join(name, "."))
	}
	out := &CreateSource{Name: name[0], RatePerSecond: cs.RatePerSecond}
	if cs.Nexmark != nil {
		if err := nexmarkSource(cs, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	if cs.Postgres != nil {
		if err := postgresSource(cs, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	if cs.Kafka != nil {
		if err := kafkaSource(cs, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	for _, gc := range cs.Columns {
		t, err := sourceColumnType(gc.Name, gc.TypeSQL)
		if err != nil {
			return nil, err
		}
		switch gc.Generator {
		case parse.GenSequence:
			if !t.Kind.IsInteger() {
				return nil, errcode.New(errcode.SQLDatatypeMismatch, "GENERATED column \"%s\" must be an integer type, not %s", gc.Name, t.SQLName())
			}
		case parse.GenUniform:
			if !t.Kind.IsNumeric() {
				return nil, errcode.New(errcode.SQLDatatypeMismatch, "UNIFORM column \"%s\" must be a numeric type, not %s", gc.Name, t.SQLName())
			}
		}
		for _, a := range gc.Args {
			if a.IsString == t.Kind.IsNumeric() && gc.Generator == parse.GenUniform {
				return nil, errcode.New(errcode.SQLDatatypeMismatch, "UNIFORM bounds of column \"%s\" must be numbers", gc.Name)
			}
		}
		for _, prev := range out.Columns {
			if prev.Column.Name == gc.Name {
				return nil, errcode.New(errcode.SQLDuplicateColumn, "column \"%s\" specified more than once", gc.Name)
			}
		}
		out.Columns = append(out.Columns, SourceColumn{Column: catalog.Column{Name: gc.Name, Type: t, NotNull: true}, Generator: gc.Generator, Args: gc.Args})
	}
	return out, nil
}

// sourceColumnType resolves the type of a source column written as SQL.
func sourceColumnType(name, typeSQL string) (types.Type, error) {
	st, err := parse.ParseOne("SELECT NULL::" + typeSQL)
	if err != nil {
		return types.Type{}, errcode.New(errcode.SQLSyntaxError, "invalid type for source column \"%s\": %s", name, typeSQL)
	}
	tc := st.(*parse.PG).Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val.GetTypeCast()
	if tc == nil {
		return types.Type{}, errcode.New(errcode.SQLSyntaxError, "invalid type for source column \"%s\": %s", name, typeSQL)
	}
	return bind.ResolveTypeName(tc.TypeName, func(int32) int { return 0 })
}

// words turns pg_query's CamelCase enum names into upper-case words
// ("DropColumn" → "DROP COLUMN").
func words(camel string) string {
	var b strings.Builder
	for i, r := range camel {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// rename converts ALTER TABLE / VIEW / MATERIALIZED VIEW ... RENAME TO.
func (c *converter) rename(r *pg_query.RenameStmt) (Statement, error) {
	kind, ok := map[pg_query.ObjectType]catalog.Kind{
		pg_query.ObjectType_OBJECT_TABLE:   catalog.KindTable,
		pg_query.ObjectType_OBJECT_VIEW:    catalog.KindView,
		pg_query.ObjectType_OBJECT_MATVIEW: catalog.KindMaterializedView,
		pg_query.ObjectType_OBJECT_INDEX:   catalog.KindIndex,
	}[r.RenameType]
	if !ok || r.Relation == nil {
		return nil, errcode.New(errcode.SQLFeatureNotSupported, "ALTER ... RENAME of a %s is not supported", strings.ToLower(strings.TrimPrefix(r.RenameType.String(), "OBJECT_"))).
			WithDetail("RockStream renames tables, views, materialized views and indexes")
	}
	name, err := c.relName(r.Relation)
	if err != nil {
		return nil, err
	}
	return &Rename{Kind: kind, Name: name, NewName: r.Newname, IfExists: r.MissingOk}, nil
}
