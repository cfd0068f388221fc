package clients_test

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/gateway/gatewaytest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// metaSchema is gatewaytest.MetaSchema without its CREATE INDEX (RockStream
// has no secondary indexes: the primary key is the only index).
const metaSchema = `CREATE TABLE orders (
  id       integer PRIMARY KEY,
  customer text NOT NULL,
  amount   numeric(10,2),
  ts       timestamptz DEFAULT now()
);
CREATE VIEW big_orders AS SELECT id, customer, amount, ts FROM orders WHERE amount > 100;
CREATE MATERIALIZED VIEW totals AS SELECT customer, sum(amount) AS s FROM orders GROUP BY customer;`

func connect(t *testing.T, s gatewaytest.Server) *pgconn.PgConn {
	t.Helper()
	c, err := pgconn.Connect(context.Background(), s.ConnString(""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func execAll(t *testing.T, c *pgconn.PgConn, sql string) []*pgconn.Result {
	t.Helper()
	res, err := c.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return res
}

func scalar(t *testing.T, c *pgconn.PgConn, sql string) string {
	t.Helper()
	res := execAll(t, c, sql)
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %v", sql, res)
	}
	return string(res[0].Rows[0][0])
}

// TestClients runs everything against one server: start-up dominates.
func TestClients(t *testing.T) {
	s := startServer(t)
	c := connect(t, s)
	execAll(t, c, metaSchema)
	ordersOID := scalar(t, c, "SELECT oid FROM pg_catalog.pg_class WHERE relname = 'orders'")
	totalsOID := scalar(t, c, "SELECT oid FROM pg_catalog.pg_class WHERE relname = 'totals'")

	t.Run("psql-fixture", func(t *testing.T) {
		// Every catalog query psql 15 sends for the meta-commands runs, with
		// the capture's OIDs replaced by RockStream's.
		queries, err := gatewaytest.PsqlMetaQueries()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			sql := strings.ReplaceAll(strings.ReplaceAll(q.SQL, "'16384'", "'"+ordersOID+"'"), "'16397'", "'"+totalsOID+"'")
			if _, err := c.Exec(context.Background(), sql).ReadAll(); err != nil {
				t.Errorf("%s: %v\n%s", q.Command, err, sql)
			}
		}
	})
	t.Run("psql", func(t *testing.T) { checkPsql(t, s) })
	t.Run("catalog", func(t *testing.T) { checkCatalogQueries(t, c, ordersOID) })
	t.Run("matrix", func(t *testing.T) {
		for _, cl := range gatewaytest.Clients {
			t.Run(cl.Name, func(t *testing.T) {
				t.Parallel()
				cl.Check(t, s)
			})
		}
	})
}

// psqlMeta runs one meta-command with the real psql binary.
func psqlMeta(t *testing.T, s gatewaytest.Server, cmd string) string {
	t.Helper()
	if _, err := exec.LookPath("psql"); err != nil {
		t.Fatal("psql is not installed; install it with: apt-get install -y postgresql-client-15")
	}
	out, err := exec.Command("psql", "-X", "-v", "ON_ERROR_STOP=1", "-h", s.Host, "-p", s.Port, "-U", s.User, "-d", s.Database, "-c", cmd).CombinedOutput()
	if err != nil {
		t.Fatalf("psql %s: %v\n%s", cmd, err, out)
	}
	return string(out)
}

// lines normalizes psql's aligned output: each line with runs of spaces
// collapsed, so assertions do not depend on column widths.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		ls = append(ls, strings.Join(strings.Fields(l), " "))
	}
	return ls
}

func contains(t *testing.T, cmd, out string, want ...string) {
	t.Helper()
	ls := lines(out)
	for _, w := range want {
		found := false
		for _, l := range ls {
			if l == w {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: no line %q in\n%s", cmd, w, out)
		}
	}
}

func checkPsql(t *testing.T, s gatewaytest.Server) {
	u := s.User
	contains(t, `\l`, psqlMeta(t, s, `\l`), "default | "+u+" | UTF8 | C.UTF-8 | C.UTF-8 | | libc |", "(1 row)")
	out := psqlMeta(t, s, `\dn`)
	contains(t, `\dn`, out, "public | "+u, "rockstream_catalog | "+u, "(2 rows)")
	contains(t, `\d`, psqlMeta(t, s, `\d`), "public | big_orders | view | "+u, "public | orders | table | "+u,
		"public | totals | materialized view | "+u, "(3 rows)")
	contains(t, `\dt`, psqlMeta(t, s, `\dt`), "public | orders | table | "+u, "(1 row)")
	contains(t, `\dv`, psqlMeta(t, s, `\dv`), "public | big_orders | view | "+u, "(1 row)")
	contains(t, `\dm`, psqlMeta(t, s, `\dm`), "public | totals | materialized view | "+u, "(1 row)")
	contains(t, `\di`, psqlMeta(t, s, `\di`), "public | orders_pkey | index | "+u+" | orders", "(1 row)")
	contains(t, `\d orders`, psqlMeta(t, s, `\d orders`), `Table "public.orders"`,
		"Column | Type | Collation | Nullable | Default",
		"id | integer | | not null |", "customer | text | | not null |", "amount | numeric(10,2) | | |",
		"ts | timestamp with time zone | | | now()", "Indexes:", `"orders_pkey" PRIMARY KEY, btree (id)`)
	contains(t, `\d+ orders`, psqlMeta(t, s, `\d+ orders`), `Table "public.orders"`,
		"Column | Type | Collation | Nullable | Default | Storage | Compression | Stats target | Description",
		"id | integer | | not null | | plain | | |", "customer | text | | not null | | extended | | |",
		`"orders_pkey" PRIMARY KEY, btree (id)`, "Access method: heap")
	contains(t, `\d big_orders`, psqlMeta(t, s, `\d big_orders`), `View "public.big_orders"`, "id | integer | | |", "customer | text | | |")
	contains(t, `\d+ totals`, psqlMeta(t, s, `\d+ totals`), `Materialized view "public.totals"`,
		"customer | text | | | | extended | | |", "s | numeric | | | | main | | |", "View definition:",
		"SELECT customer, sum(amount) AS s FROM orders GROUP BY customer")
	contains(t, `\df`, psqlMeta(t, s, `\df`), "Schema | Name | Result data type | Argument data types | Type", "(0 rows)")
	contains(t, `\du`, psqlMeta(t, s, `\du`), u+" | Superuser, Create role, Create DB, Replication, Bypass RLS | {}")
	contains(t, `\dT`, psqlMeta(t, s, `\dT`), "Schema | Name | Description", "(0 rows)")
	// The verbose forms psql users reach for next.
	contains(t, `\dt+`, psqlMeta(t, s, `\dt+`), "public | orders | table | "+u+" | permanent | heap | 0 bytes |")
	contains(t, `\di+`, psqlMeta(t, s, `\di+`), "public | orders_pkey | index | "+u+" | orders | permanent | btree | 0 bytes |")
	contains(t, `\dn+`, psqlMeta(t, s, `\dn+`), "public | "+u+" | |")
	contains(t, `\l+`, psqlMeta(t, s, `\l+`), "default | "+u+" | UTF8 | C.UTF-8 | C.UTF-8 | | libc | | 0 bytes | pg_default |")
	contains(t, `\d+ big_orders`, psqlMeta(t, s, `\d+ big_orders`), `View "public.big_orders"`, "amount | numeric(10,2) | | | | main |",
		"SELECT id, customer, amount, ts FROM orders WHERE amount > 100")
	contains(t, `\dx`, psqlMeta(t, s, `\dx`), "plpgsql | 1.0 | pg_catalog |")
}

// checkCatalogQueries asserts the relations drivers read directly.
func checkCatalogQueries(t *testing.T, c *pgconn.PgConn, ordersOID string) {
	rows := func(sql string) string {
		t.Helper()
		var out []string
		for _, r := range execAll(t, c, sql) {
			for _, row := range r.Rows {
				var vals []string
				for _, v := range row {
					if v == nil {
						vals = append(vals, "NULL")
					} else {
						vals = append(vals, string(v))
					}
				}
				out = append(out, strings.Join(vals, "|"))
			}
		}
		return strings.Join(out, "\n")
	}
	check := func(sql, want string) {
		t.Helper()
		if got := rows(sql); got != want {
			t.Errorf("%s:\ngot  %q\nwant %q", sql, got, want)
		}
	}
	check(`SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1`,
		"big_orders|VIEW\norders|BASE TABLE\ntotals|VIEW")
	check(`SELECT column_name, data_type, is_nullable, column_default, numeric_precision, numeric_scale FROM information_schema.columns
		WHERE table_name = 'orders' ORDER BY ordinal_position`,
		"id|integer|NO|NULL|32|0\ncustomer|text|NO|NULL|NULL|NULL\namount|numeric|YES|NULL|10|2\nts|timestamp with time zone|YES|now()|NULL|NULL")
	check(`SELECT tc.constraint_type, k.column_name FROM information_schema.table_constraints tc
		JOIN information_schema.key_column_usage k ON k.constraint_name = tc.constraint_name WHERE tc.table_name = 'orders'`, "PRIMARY KEY|id")
	check(`SELECT schema_name FROM information_schema.schemata ORDER BY 1`, "information_schema\npg_catalog\npublic\nrockstream_catalog")
	check(`SELECT table_name FROM information_schema.views ORDER BY 1`, "big_orders\ntotals")
	check(`SELECT tablename, hasindexes FROM pg_catalog.pg_tables WHERE schemaname = 'public'`, "orders|t")
	check(`SELECT viewname FROM pg_catalog.pg_views`, "big_orders")
	check(`SELECT matviewname, definition FROM pg_catalog.pg_matviews`, "totals|SELECT customer, sum(amount) AS s FROM orders GROUP BY customer")
	check(`SELECT conname, contype, pg_catalog.pg_get_constraintdef(oid, true) FROM pg_catalog.pg_constraint WHERE conrelid = `+ordersOID,
		"orders_pkey|p|PRIMARY KEY (id)")
	check(`SELECT pg_catalog.pg_get_indexdef(indexrelid), indisprimary FROM pg_catalog.pg_index WHERE indrelid = `+ordersOID,
		"CREATE UNIQUE INDEX orders_pkey ON public.orders USING btree (id)|t")
	check(`SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_catalog.pg_attribute a
		WHERE a.attrelid = `+ordersOID+` AND a.attnum > 0 ORDER BY a.attnum`,
		"id|integer|t\ncustomer|text|t\namount|numeric(10,2)|f\nts|timestamp with time zone|f")
	check(`SELECT rolname, rolsuper FROM pg_catalog.pg_roles`, "rockstream|t")
	check(`SELECT datname, pg_catalog.pg_encoding_to_char(encoding) FROM pg_catalog.pg_database`, "default|UTF8")
	check(`SELECT count(*) > 0 FROM pg_catalog.pg_settings WHERE name = 'TimeZone'`, "t")
	check(`SELECT pg_catalog.quote_ident('Orders'), pg_catalog.quote_ident('orders'), pg_catalog.format_type(1043, 14), pg_catalog.format_type(23, NULL)`,
		`"Orders"|orders|character varying(10)|integer`)
	check(`SELECT pg_catalog.pg_get_userbyid(10), pg_catalog.has_table_privilege('orders', 'SELECT'), pg_catalog.current_database()`, "rockstream|t|default")
	check(`SELECT current_user, session_user, current_catalog, current_schema, pg_catalog.current_schemas(true)`,
		"rockstream|rockstream|default|public|{pg_catalog,public}")
	if res := execAll(t, c, `SELECT current_user, current_catalog`); string(res[0].FieldDescriptions[0].Name) != "current_user" ||
		string(res[0].FieldDescriptions[1].Name) != "current_catalog" {
		t.Errorf("column names: %v", res[0].FieldDescriptions)
	}
	check(`SELECT pg_catalog.pg_table_is_visible(`+ordersOID+`), pg_catalog.pg_get_viewdef(`+ordersOID+`) IS NULL`, "t|t")
	check(`SELECT c.relname FROM pg_catalog.pg_class c WHERE c.oid = '`+ordersOID+`'::pg_catalog.regclass::pg_catalog.oid`, "orders")
	if n, _ := strconv.Atoi(rows(`SELECT count(*) FROM pg_catalog.pg_type WHERE typname IN ('int4', '_int4', 'text', 'numeric')`)); n != 4 {
		t.Errorf("pg_type: %d of int4, _int4, text, numeric", n)
	}
}
