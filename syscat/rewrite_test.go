package syscat

import (
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

func TestRewriteLeavesOtherStatements(t *testing.T) {
	for _, q := range []string{"SELECT 1", "SELECT * FROM orders WHERE id = $1", "INSERT INTO t VALUES (1, 'pg_x')"} {
		if got := Rewrite(q, nil); got != q {
			t.Errorf("Rewrite(%q) = %q", q, got)
		}
	}
}

func TestRewriteRegclassLiterals(t *testing.T) {
	rel, _ := Lookup([]string{SchemaPgCatalog, "pg_class"})
	want := "'" + itoa(int(RelationOID(rel.ID))) + "'::pg_catalog.regclass"
	for _, q := range []string{"SELECT 'pg_class'::regclass", "SELECT 'pg_catalog.pg_class'::pg_catalog.regclass"} {
		if got := Rewrite(q, nil); got != "SELECT "+want {
			t.Errorf("Rewrite(%q) = %q, want SELECT %s", q, got, want)
		}
	}
	// Unknown names are left for the cast to reject.
	if q := "SELECT 'nope'::regclass"; Rewrite(q, nil) != q {
		t.Errorf("unknown relation rewritten: %q", Rewrite(q, nil))
	}
}

// Every rewrite applies to the client text it was written for (whitespace
// reflowed) and yields valid SQL without the construct it removes.
func TestRewriteClientQueries(t *testing.T) {
	cases := []struct{ name, sql, gone, kept string }{
		{"psql policies", `SELECT pol.polname, pol.polpermissive,
  CASE WHEN pol.polroles = '{0}' THEN NULL ELSE pg_catalog.array_to_string(array(select rolname from pg_catalog.pg_roles where oid = any (pol.polroles) order by 1),',') END
FROM pg_catalog.pg_policy pol
WHERE pol.polrelid = '16384' ORDER BY 1`, "any (", "WHERE false"},
	}
	for _, c := range cases {
		got := Rewrite(c.sql, nil)
		if strings.Contains(got, c.gone) || !strings.Contains(got, c.kept) {
			t.Errorf("%s: rewrite kept %q or lacks %q:\n%s", c.name, c.gone, c.kept, got)
		}
		if _, err := pg_query.Parse(got); err != nil {
			t.Errorf("%s: rewritten SQL does not parse: %v\n%s", c.name, err, got)
		}
	}
}

// Rules retired because the compiler runs the construct (correlated
// scalar and ARRAY subqueries, window functions, set-returning functions
// in the SELECT list): the client text passes through unchanged, and
// clients/ proves the results.
func TestRetiredRewrites(t *testing.T) {
	for _, q := range []string{
		"SELECT a.attname, (SELECT pg_catalog.pg_get_expr(d.adbin, d.adrelid, true) FROM pg_catalog.pg_attrdef d WHERE d.adrelid = a.attrelid AND d.adnum = a.attnum AND a.atthasdef), a.attnotnull FROM pg_catalog.pg_attribute a WHERE a.attrelid = '16384' AND a.attnum > 0",
		"SELECT * FROM (SELECT n.nspname,c.relname,a.attname,row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum) AS attnum FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_class c ON (c.relnamespace = n.oid) JOIN pg_catalog.pg_attribute a ON (a.attrelid=c.oid)) c",
		"SELECT r.rolname, ARRAY(SELECT b.rolname FROM pg_catalog.pg_auth_members m JOIN pg_catalog.pg_roles b ON (m.roleid = b.oid) WHERE m.member = r.oid) as memberof FROM pg_catalog.pg_roles r",
		"SELECT t.typname FROM pg_catalog.pg_type t WHERE (t.typrelid = 0 OR (SELECT c.relkind = 'c' FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid))",
		// pgjdbc 42.5 getPrimaryKeys.
		"SELECT result.TABLE_CAT, result.TABLE_SCHEM, result.TABLE_NAME, result.COLUMN_NAME, result.KEY_SEQ, result.PK_NAME FROM (SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM,   ct.relname AS TABLE_NAME, a.attname AS COLUMN_NAME,   (information_schema._pg_expandarray(i.indkey)).n AS KEY_SEQ, ci.relname AS PK_NAME,   information_schema._pg_expandarray(i.indkey) AS KEYS, a.attnum AS A_ATTNUM FROM pg_catalog.pg_class ct   JOIN pg_catalog.pg_attribute a ON (ct.oid = a.attrelid)   JOIN pg_catalog.pg_namespace n ON (ct.relnamespace = n.oid)   JOIN pg_catalog.pg_index i ON ( a.attrelid = i.indrelid)   JOIN pg_catalog.pg_class ci ON (ci.oid = i.indexrelid) WHERE true  AND n.nspname = E'public' AND ct.relname = E'jdbc_t' AND i.indisprimary  ) result where  result.A_ATTNUM = (result.KEYS).x  ORDER BY result.table_name, result.pk_name, result.key_seq",
		// SQLAlchemy 1.4 get_pk_constraint.
		`SELECT a.attname
                FROM pg_attribute a JOIN (
                    SELECT unnest(ix.indkey) attnum,
                           generate_subscripts(ix.indkey, 1) ord
                    FROM pg_index ix
                    WHERE ix.indrelid = 17388 AND ix.indisprimary
                    ) k ON a.attnum=k.attnum
                WHERE a.attrelid = 17388
                ORDER BY k.ord`,
	} {
		if got := Rewrite(q, nil); got != q {
			t.Errorf("retired rewrite still applies:\n%s\n->\n%s", q, got)
		}
	}
}
