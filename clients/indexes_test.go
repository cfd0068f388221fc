package clients_test

import (
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rockstream/rockstream/gateway/gatewaytest"
	"github.com/rockstream/rockstream/internal/pgtest"
)

// ormMigration is an ORM-style migration with SQLAlchemy 1.4 (what
// Alembic's op.create_index / op.drop_index emit): tables with indexes
// from Index() and index=True, then reflection with inspect().get_indexes,
// an index dropped, reflection again; run once in the default schema and
// once in schema "mig" (CREATE SCHEMA, qualified DDL, reflection of that
// schema, DROP SCHEMA). It prints one line per step; the output must equal
// PostgreSQL 15's.
const ormMigration = `
import os, sys, json, sqlalchemy as sa
schema = os.environ.get("ARG") or None
e = sa.create_engine(os.environ["DB_URL"])
if schema:
    with e.begin() as conn:
        conn.execute(sa.schema.CreateSchema(schema))
md = sa.MetaData(schema=schema)
sa.Table("mig_users", md,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("email", sa.String(100), nullable=False, index=True),
    sa.Column("name", sa.Text),
    sa.Column("created", sa.DateTime),
    sa.Index("ix_mig_users_name_created", "name", sa.text("created DESC")),
    sa.Index("uq_mig_users_id", "id", unique=True))
sa.Table("mig_posts", md,
    sa.Column("user_id", sa.Integer, primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("title", sa.String(200)),
    sa.Index("ix_mig_posts_title", "title", postgresql_ops={"title": "varchar_pattern_ops"}))
md.drop_all(e)
md.create_all(e)
def show(step):
    insp = sa.inspect(e)
    for t in ("mig_users", "mig_posts"):
        idx = sorted(insp.get_indexes(t, schema=schema), key=lambda i: i["name"])
        print(step, t, json.dumps(idx, sort_keys=True, default=str))
    print(step, "tables", sorted(insp.get_table_names(schema=schema)), "pk", insp.get_pk_constraint("mig_posts", schema=schema)["constrained_columns"])
show("created")
with e.begin() as conn:
    # Alembic's op.create_index / op.drop_index.
    q = (schema + ".") if schema else ""
    conn.execute(sa.text("CREATE INDEX IF NOT EXISTS ix_mig_posts_seq ON " + q + "mig_posts (seq)"))
    conn.execute(sa.text("CREATE INDEX IF NOT EXISTS ix_mig_posts_seq ON " + q + "mig_posts (seq)"))
    sa.Index("ix_mig_users_name_created", md.tables[q + "mig_users"].c.name).drop(conn)
show("migrated")
try:
    with e.begin() as conn:
        conn.execute(sa.text("CREATE INDEX ix_mig_posts_seq ON " + q + "mig_posts (title)"))
except sa.exc.ProgrammingError as err:
    print("duplicate", err.orig.pgcode)
md.drop_all(e)
print("dropped", sa.inspect(e).get_table_names(schema=schema))
if schema:
    with e.begin() as conn:
        conn.execute(sa.schema.DropSchema(schema))
    print("schemas", "mig" in sa.inspect(e).get_schema_names())
`

// nodeMigration is what node-postgres migration tools (node-pg-migrate,
// knex) send: CREATE INDEX IF NOT EXISTS twice (the NOTICE on the second),
// the index listed from pg_indexes, DROP INDEX IF EXISTS.
const nodeMigration = `
const { Client } = require('pg');
(async () => {
  const c = new Client({ connectionString: process.env.DB_URL });
  const notices = [];
  c.on('notice', n => notices.push(n.code + ' ' + n.message));
  await c.connect();
  await c.query('DROP TABLE IF EXISTS node_mig; CREATE TABLE node_mig (id serial PRIMARY KEY, k text, v int)');
  await c.query('CREATE INDEX IF NOT EXISTS "node_mig_k_v_index" ON "node_mig" ("k", "v")');
  await c.query('CREATE INDEX IF NOT EXISTS "node_mig_k_v_index" ON "node_mig" ("k", "v")');
  const r = await c.query("SELECT indexname, replace(indexdef, current_schema() || '.', 'public.') AS def FROM pg_indexes WHERE tablename = 'node_mig' ORDER BY 1");
  for (const row of r.rows) console.log(row.indexname, row.def);
  await c.query('DROP INDEX IF EXISTS "node_mig_k_v_index"');
  await c.query('DROP INDEX IF EXISTS "node_mig_k_v_index"');
  const n = await c.query("SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = 'node_mig'");
  console.log('after drop', n.rows[0].n);
  console.log(notices.join('\n'));
  await c.query('DROP TABLE node_mig');
  await c.end();
})().catch(e => { console.error(e); process.exit(1); });
`

// TestORMIndexMigrations runs the migrations on RockStream and on
// PostgreSQL 15: the outputs must be equal.
func TestORMIndexMigrations(t *testing.T) {
	s := startServer(t)
	pgURL, _ := pgtest.Database(t)
	rsURL := s.URL()
	t.Run("SQLAlchemy", func(t *testing.T) {
		for _, schema := range []string{"", "mig"} {
			sqlalchemy := func(url string) string {
				return runWith(t, "/usr/bin/python3", "-c", ormMigration+"\n", "DB_URL="+strings.Replace(url, "postgres://", "postgresql+psycopg2://", 1), "ARG="+schema)
			}
			want, got := sqlalchemy(pgURL), sqlalchemy(rsURL)
			t.Logf("rockstream (schema %q):\n%s", schema, got)
			if got != want {
				t.Errorf("SQLAlchemy migration (schema %q) differs\nrockstream:\n%s\npostgresql:\n%s", schema, got, want)
			}
		}
	})
	t.Run("node-postgres", func(t *testing.T) {
		home, _ := os.UserHomeDir()
		mods := filepath.Join(home, ".cache", "rockstream-node", "node_modules")
		if _, err := os.Stat(filepath.Join(mods, "pg")); err != nil {
			t.Fatalf("node-postgres is not installed in %s; install it with: npm install --prefix %s pg@8", mods, filepath.Dir(mods))
		}
		node := func(url string) string {
			return runWith(t, "node", "-e", nodeMigration, "DB_URL="+url, "NODE_PATH="+mods)
		}
		want, got := node(pgURL), node(rsURL)
		t.Logf("rockstream:\n%s", got)
		if got != want {
			t.Errorf("node-postgres migration differs\nrockstream:\n%s\npostgresql:\n%s", got, want)
		}
	})
}

// runWith runs a client program with extra environment and returns its
// output; a missing program fails the test with the install command.
func runWith(t *testing.T, program, flag, script string, env ...string) string {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		t.Fatalf("%s is not installed; install it with: apt-get install -y python3-sqlalchemy python3-psycopg2 nodejs npm", program)
	}
	cmd := exec.Command(program, flag, script)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", program, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestPsqlIndexes: psql 15's \d t and \di print RockStream's indexes as
// they print PostgreSQL 15's (the owner's name aside).
func TestPsqlIndexes(t *testing.T) {
	rs := startServer(t)
	pgURL, _ := pgtest.Database(t)
	u, err := url.Parse(pgURL)
	if err != nil {
		t.Fatal(err)
	}
	pg := gatewaytest.Server{Host: u.Hostname(), Port: u.Port(), User: u.User.Username(), Database: strings.TrimPrefix(u.Path, "/")}
	const schema = `CREATE TABLE pi (id int PRIMARY KEY, a int, b text);
		CREATE INDEX pi_a_idx ON pi (a);
		CREATE INDEX ON pi (b DESC, a);
		CREATE UNIQUE INDEX pi_id_key ON pi (id);
		CREATE INDEX pi_b_like ON pi (b text_pattern_ops)`
	execAll(t, connect(t, rs), schema)
	execAll(t, connect(t, pg), schema)
	// Rows and headers (not the title and rule lines, whose widths
	// follow the owner's name); \di+ is left out: its Size is storage.
	table := func(out string) string {
		var keep []string
		for _, l := range lines(out) {
			if strings.Contains(l, "|") || strings.HasPrefix(l, "(") || strings.Contains(l, "btree") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	for _, cmd := range []string{`\d pi`, `\di`, `\di pi_b*`, `\d pi_a_idx`, `\d pi_b_like`} {
		want := strings.ReplaceAll(psqlMeta(t, pg, cmd), pg.User, "OWNER")
		got := strings.ReplaceAll(psqlMeta(t, rs, cmd), rs.User, "OWNER")
		if table(got) == "" || table(got) != table(want) {
			t.Errorf("psql %s differs\nrockstream:\n%s\npostgresql:\n%s", cmd, got, want)
		}
	}
}
