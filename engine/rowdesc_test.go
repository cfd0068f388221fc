package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/internal/enginetest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// TestRowDescriptionOrigins: RowDescription's table OID and column
// attribute number (what pgjdbc's ResultSetMetaData.getTableName,
// psycopg's Column.table_oid and SQLAlchemy read) name the same relation
// and column as PostgreSQL 15's, for plain column references through
// joins, subqueries, CTEs and views, and are zero for computed columns.
// OIDs differ between the servers, so each is compared by the name it
// resolves to in that server's pg_class.
func TestRowDescriptionOrigins(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := enginetest.StartServer(t, t.TempDir())
	rs := dialPG(t, srv.URL)
	pg := dialPG(t, pgtest.Start(t))
	schema := fmt.Sprintf("rowdesc_%d", time.Now().UnixNano())
	mustExec(t, pg, "CREATE SCHEMA "+schema+"; SET search_path = "+schema)
	t.Cleanup(func() { _, _ = pg.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE").ReadAll() })
	setup := `CREATE TABLE t (k int PRIMARY KEY, v text, w int);
		CREATE TABLE u (k int PRIMARY KEY, x text);
		CREATE VIEW tv AS SELECT w, k FROM t;
		CREATE MATERIALIZED VIEW mv AS SELECT v, count(*) AS n FROM t GROUP BY v`
	mustExec(t, rs, setup)
	mustExec(t, pg, setup)
	for _, q := range []string{
		`SELECT k, v, w FROM t`,
		`SELECT * FROM t`,
		`SELECT w, k + 1 AS k1, 'lit' AS lit, v AS renamed, t.k FROM t`,
		`SELECT * FROM t JOIN u ON t.k = u.k`,
		`SELECT u.x, t.v FROM t LEFT JOIN u USING (k)`,
		`SELECT s.v, s.c FROM (SELECT v, w AS c FROM t) s`,
		`WITH c AS (SELECT k, w FROM t) SELECT w, k FROM c`,
		`SELECT * FROM tv`,
		`SELECT v, n FROM mv`,
		`SELECT v, count(*) FROM t GROUP BY v`,
		`SELECT k FROM t UNION SELECT k FROM u`,
		`SELECT relname, relnamespace FROM pg_catalog.pg_class LIMIT 1`,
		`SELECT 1 AS one`,
	} {
		want := origins(t, ctx, pg, q)
		got := origins(t, ctx, rs, q)
		if got != want {
			t.Errorf("%s\n  rockstream: %s\n  postgresql: %s", q, got, want)
		}
	}
}

func dialPG(t *testing.T, url string) *pgconn.PgConn {
	t.Helper()
	c, err := pgconn.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func mustExec(t *testing.T, c *pgconn.PgConn, sql string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql).ReadAll(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// origins describes q (extended protocol, as drivers do) and renders each
// column's origin as relation.attnum, or "-" for none.
func origins(t *testing.T, ctx context.Context, c *pgconn.PgConn, q string) string {
	t.Helper()
	sd, err := c.Prepare(ctx, "", q, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var parts []string
	for _, f := range sd.Fields {
		if f.TableOID == 0 {
			parts = append(parts, f.Name+"=-")
			continue
		}
		res, err := c.Exec(ctx, fmt.Sprintf("SELECT relname FROM pg_catalog.pg_class WHERE oid = %d", f.TableOID)).ReadAll()
		if err != nil || len(res) != 1 || len(res[0].Rows) != 1 {
			t.Fatalf("%s: table oid %d of %s not in pg_class: %v", q, f.TableOID, f.Name, err)
		}
		parts = append(parts, fmt.Sprintf("%s=%s.%d", f.Name, res[0].Rows[0][0], f.TableAttributeNumber))
	}
	// The simple protocol's RowDescription must say the same.
	res, err := c.Exec(ctx, q).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	for i, f := range res[0].FieldDescriptions {
		if f.TableOID != sd.Fields[i].TableOID || f.TableAttributeNumber != sd.Fields[i].TableAttributeNumber {
			t.Errorf("%s: column %s: simple protocol %d.%d, extended %d.%d", q, f.Name, f.TableOID, f.TableAttributeNumber, sd.Fields[i].TableOID, sd.Fields[i].TableAttributeNumber)
		}
	}
	return strings.Join(parts, " ")
}

// TestRegColumnsDescribed: regclass and regtype result columns are
// described with their own type OIDs (2205, 2206) and sent as names in
// text format and as oids in binary format, as PostgreSQL 15 does; ORDER
// BY orders them by oid.
func TestRegColumnsDescribed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := enginetest.StartServer(t, t.TempDir())
	rs := dialPG(t, srv.URL)
	pg := dialPG(t, pgtest.Start(t))
	for _, q := range []string{
		`SELECT 'pg_class'::regclass, 'pg_catalog.pg_type'::regclass AS t, 23::regtype, 25::oid::regtype AS ty, 0::regclass AS zero`,
		`SELECT oid::regclass, relname FROM pg_catalog.pg_class WHERE relname IN ('pg_class', 'pg_type', 'pg_attribute') ORDER BY 2`,
		`SELECT typname, oid::regtype FROM pg_catalog.pg_type WHERE typname IN ('int4', 'text', 'bool') ORDER BY 2 DESC`,
		`SELECT DISTINCT 20::regtype FROM pg_catalog.pg_type`,
	} {
		want := describeAndFetch(t, ctx, pg, q, 0)
		got := describeAndFetch(t, ctx, rs, q, 0)
		if got != want {
			t.Errorf("%s (text)\n  rockstream: %s\n  postgresql: %s", q, got, want)
		}
	}
	// Binary: a regtype is its type oid (the same on both servers).
	q := `SELECT typname, oid::regtype FROM pg_catalog.pg_type WHERE typname IN ('int4', 'text', 'bool') ORDER BY 2 DESC`
	if got, want := describeAndFetch(t, ctx, rs, q, 1), describeAndFetch(t, ctx, pg, q, 1); got != want {
		t.Errorf("%s (binary)\n  rockstream: %s\n  postgresql: %s", q, got, want)
	}
	// A regclass is its pg_class oid: the name in text, the oid in binary.
	mustExec(t, rs, `CREATE TABLE regt (k int PRIMARY KEY)`)
	if got, want := describeAndFetch(t, ctx, rs, `SELECT 'regt'::regclass`, 0), "regclass/2205: regt"; got != want {
		t.Errorf("user relation: %s, want %s", got, want)
	}
	oid := describeAndFetch(t, ctx, rs, `SELECT oid FROM pg_catalog.pg_class WHERE relname = 'regt'`, 1)
	if got := describeAndFetch(t, ctx, rs, `SELECT 'regt'::regclass`, 1); strings.TrimPrefix(got, "regclass/2205:") != strings.TrimPrefix(oid, "oid/26:") {
		t.Errorf("user relation in binary: %s, want the oid %s", got, oid)
	}
}

// describeAndFetch runs q in the extended protocol with one result format
// and renders the column types and the values (binary values as hex).
func describeAndFetch(t *testing.T, ctx context.Context, c *pgconn.PgConn, q string, format int16) string {
	t.Helper()
	res := c.ExecParams(ctx, q, nil, nil, nil, []int16{format}).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", q, res.Err)
	}
	var parts []string
	for _, f := range res.FieldDescriptions {
		parts = append(parts, fmt.Sprintf("%s/%d", typeName(f.DataTypeOID), f.DataTypeOID))
	}
	out := strings.Join(parts, ",") + ":"
	for _, r := range res.Rows {
		for _, v := range r {
			if format == 1 {
				out += fmt.Sprintf(" %x", v)
			} else {
				out += " " + string(v)
			}
		}
	}
	return out
}

func typeName(oid uint32) string {
	switch oid {
	case 2205:
		return "regclass"
	case 2206:
		return "regtype"
	case 26:
		return "oid"
	}
	return "t"
}
