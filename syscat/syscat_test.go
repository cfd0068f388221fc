package syscat

import (
	"testing"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/syscat/sysrel"
)

func testEnv() *Env {
	var orders = &catalog.Relation{Name: "orders", Kind: catalog.KindTable, Columns: []catalog.Column{
		{Name: "id", Type: types.TInt4, NotNull: true}, {Name: "customer", Type: types.TText, NotNull: true},
		{Name: "ts", Type: types.TTimestampTZ, Default: "now()"}}, PrimaryKey: []int{0}}
	orders.ID.Object[15] = 0xe8
	orders.ID.Object[14] = 0x03 // object 1000
	mv := &catalog.Relation{Name: "totals", Kind: catalog.KindMaterializedView, Columns: []catalog.Column{{Name: "n", Type: types.TInt8}}, SQL: "SELECT count(*) AS n FROM orders"}
	mv.ID.Object[15] = 0xe9
	mv.ID.Object[14] = 0x03
	return &Env{Relations: []*catalog.Relation{orders, mv}, User: "alice", Database: "default",
		Settings: []Setting{{Name: "TimeZone", Value: "UTC"}}}
}

func TestRowsMatchColumns(t *testing.T) {
	if err := validate(testEnv()); err != nil {
		t.Fatal(err)
	}
	if err := validate(&Env{}); err != nil {
		t.Fatal(err)
	}
}

func rowsOf(t *testing.T, schema, name string, env *Env) []types.Row {
	t.Helper()
	rel, ok := Lookup([]string{schema, name})
	if !ok {
		t.Fatalf("%s.%s missing", schema, name)
	}
	for _, tb := range All() {
		if tb.Rel == rel {
			return tb.Rows(env)
		}
	}
	t.Fatalf("%s.%s not in All", schema, name)
	return nil
}

func TestConsistentOIDs(t *testing.T) {
	env := testEnv()
	orders := env.Relations[0]
	classOIDs := map[int64]string{}
	for _, r := range rowsOf(t, SchemaPgCatalog, "pg_class", env) {
		classOIDs[r[0].(int64)] = r[1].(string)
	}
	if classOIDs[RelationOID(orders.ID)] != "orders" || classOIDs[IndexOID(orders.ID)] != "orders_pkey" {
		t.Fatalf("pg_class lacks orders or its index: %v", classOIDs[RelationOID(orders.ID)])
	}
	idx := rowsOf(t, SchemaPgCatalog, "pg_index", env)
	if len(idx) != 1 || idx[0][0] != IndexOID(orders.ID) || idx[0][1] != RelationOID(orders.ID) {
		t.Fatalf("pg_index: %v", idx)
	}
	con := rowsOf(t, SchemaPgCatalog, "pg_constraint", env)
	if len(con) != 1 || con[0][1] != "orders_pkey" || con[0][9] != IndexOID(orders.ID) {
		t.Fatalf("pg_constraint: %v", con)
	}
	def := rowsOf(t, SchemaPgCatalog, "pg_attrdef", env)
	if len(def) != 1 || def[0][2] != int64(3) || def[0][3] != "now()" {
		t.Fatalf("pg_attrdef: %v", def)
	}
	if got := IndexDef(orders); got != "CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id)" {
		t.Fatal(got)
	}
	tabs := rowsOf(t, SchemaInfo, "tables", env)
	found := false
	for _, r := range tabs {
		if r[2] == "totals" && r[3] == "VIEW" {
			found = true
		}
	}
	if !found {
		t.Fatal("information_schema.tables lacks the materialized view")
	}
	roles := rowsOf(t, SchemaPgCatalog, "pg_roles", env)
	if len(roles) != 1 || roles[0][1] != "alice" || roles[0][2] != true {
		t.Fatalf("pg_roles: %v", roles)
	}
}

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{"abc": "abc", "Abc": `"Abc"`, "select": `"select"`, "a b": `"a b"`, `a"b`: `"a""b"`, "_x1": "_x1", "1x": `"1x"`} {
		if got := quoteIdent(in); got != want {
			t.Errorf("quoteIdent(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRowSourcesMatchRelations: every system relation sysrel defines has
// exactly one row source here and every row source names a relation; a
// relation added on one side only is refused at first use.
func TestRowSourcesMatchRelations(t *testing.T) {
	if got, want := len(newRegistry(sysrel.All(), rowSources()).all), len(sysrel.All()); got != want {
		t.Fatalf("registry has %d tables, sysrel defines %d", got, want)
	}
	mustPanic := func(what string, relations []sysrel.Relation, sources []rowSource) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", what)
			}
		}()
		newRegistry(relations, sources)
	}
	sources := rowSources()
	mustPanic("relation without rows", sysrel.All(), sources[1:])
	mustPanic("rows without relation", sysrel.All()[1:], sources)
	mustPanic("two row sources", sysrel.All(), append(sources, sources[0]))
}
