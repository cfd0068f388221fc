package engine_test

import (
	"testing"

	"github.com/rockstream/rockstream/correctness/harness"
	"github.com/rockstream/rockstream/internal/enginetest"
)

// prepareScript exercises SQL-level PREPARE / EXECUTE / DEALLOCATE; every
// outcome must equal PostgreSQL 15's.
var prepareScript = []string{
	`CREATE TABLE p (k int PRIMARY KEY, v text, n numeric(5,1))`,
	`PREPARE ins (int, text) AS INSERT INTO p (k, v) VALUES ($1, $2)`,
	`EXECUTE ins(1, 'one')`,
	`EXECUTE ins (2, 'two' || '!')`,
	`EXECUTE ins('3', 'three, with a comma')`,
	`EXECUTE ins(1)`,
	`EXECUTE ins(1, 'a', 'b')`,
	`EXECUTE ins('x', 'y')`,
	`EXECUTE nope`,
	`EXECUTE nope(1)`,
	`PREPARE ins AS SELECT 1`,
	`PREPARE "Sel" AS SELECT k, v FROM p WHERE k >= $1 ORDER BY k`,
	`EXECUTE "Sel"(2)`,
	`EXECUTE "Sel"(abs(-1) + 0)`,
	`EXECUTE sel(1)`,
	`PREPARE upd (text, int) AS UPDATE p SET v = $1 WHERE k = $2 RETURNING k, v`,
	`EXECUTE upd('ONE', 1)`,
	`PREPARE setn (numeric(5,1), int) AS UPDATE p SET n = $1 WHERE k = $2 RETURNING n`,
	`EXECUTE setn(2.345, 2)`,
	`PREPARE del AS DELETE FROM p WHERE k = $1::int`,
	`EXECUTE del(3)`,
	// Prepared statements are not transactional.
	`BEGIN`,
	`PREPARE intx AS SELECT count(*) FROM p`,
	`EXECUTE ins(4, 'four')`,
	`EXECUTE intx`,
	`ROLLBACK`,
	`EXECUTE intx`,
	`EXECUTE "Sel"(0)`,
	`PREPARE calc AS SELECT $1::int + 1 AS x, $2::text AS t`,
	`EXECUTE calc(41, NULL)`,
	`PREPARE vals (int) AS VALUES ($1), ($1 * 2)`,
	`EXECUTE vals(21)`,
	`PREPARE bad AS SELECT * FROM missing`,
	`PREPARE bad2 (nosuchtype) AS SELECT $1`,
	`EXECUTE bad`,
	`DEALLOCATE "Sel"`,
	`EXECUTE "Sel"(0)`,
	`DEALLOCATE "Sel"`,
	`DEALLOCATE PREPARE ins`,
	`EXECUTE upd('x', 1)`,
	`DEALLOCATE ALL`,
	`EXECUTE upd('x', 1)`,
	`EXECUTE intx`,
	`PREPARE ins AS SELECT 'reused name'`,
	`EXECUTE ins`,
	`DEALLOCATE ALL`,
	`SELECT * FROM p ORDER BY k`,
}

// TestPrepareMatchesPostgres runs prepareScript on RockStream and on
// PostgreSQL 15 and compares every statement's outcome.
func TestPrepareMatchesPostgres(t *testing.T) {
	srv := enginetest.StartServer(t, t.TempDir())
	rs := harness.ConnectRS(t, srv)
	pg := harness.ConnectPG(t)
	checkScriptMatchesPostgres(t, rs, pg, prepareScript)
}
