package engine_test

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/rockstream/rockstream/internal/enginetest"
)

// TestCopyBinary: pgx's CopyFrom (binary COPY) loads rows of every common
// type, including NULLs, a view over the table follows, COPY TO in FORMAT
// binary round-trips through COPY FROM, and malformed binary input fails
// with 22P04 and an RS code while the table stays unchanged.
func TestCopyBinary(t *testing.T) {
	ctx := context.Background()
	conn := dialPgx(t, enginetest.StartServer(t, t.TempDir()).URL)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`SET TimeZone = 'UTC'`)
	exec(`CREATE TABLE bt (id int8 PRIMARY KEY, n int4, s int2, name text, ok bool, f float8, amount numeric, d date, ts timestamptz, raw bytea)`)
	exec(`CREATE TABLE bt2 (id int8 PRIMARY KEY, n int4, s int2, name text, ok bool, f float8, amount numeric, d date, ts timestamptz, raw bytea)`)
	exec(`CREATE MATERIALIZED VIEW bt_sum AS SELECT count(*) AS rows, sum(n) AS n FROM bt`)
	ts := time.Date(2026, 11, 30, 12, 34, 56, 789000000, time.UTC)
	rows := [][]any{
		{int64(1), int32(10), int16(-3), "alpha", true, 1.5, pgtype.Numeric{Int: big.NewInt(12340), Exp: -3, Valid: true}, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), ts, []byte{0, 1, 0xff}},
		{int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{int64(3), int32(-7), int16(32767), "tab\tand ünïcode", false, -0.25, pgtype.Numeric{Int: big.NewInt(-1), Exp: -5, Valid: true}, time.Date(1999, 12, 31, 0, 0, 0, 0, time.UTC), ts.Add(-time.Hour), []byte{}},
	}
	cols := []string{"id", "n", "s", "name", "ok", "f", "amount", "d", "ts", "raw"}
	n, err := conn.CopyFrom(ctx, pgx.Identifier{"bt"}, cols, pgx.CopyFromRows(rows))
	if err != nil || n != 3 {
		t.Fatalf("CopyFrom: %d rows, %v", n, err)
	}
	const q = `SELECT id, n, s, name, ok, f, amount, d, ts, encode(raw, 'hex') FROM %s ORDER BY id`
	read := func(table string) string {
		t.Helper()
		var out strings.Builder
		res := conn.PgConn().ExecParams(ctx, strings.Replace(q, "%s", table, 1), nil, nil, nil, nil).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		for _, r := range res.Rows {
			for i, v := range r {
				if i > 0 {
					out.WriteByte('|')
				}
				if v == nil {
					out.WriteString("NULL")
				} else {
					out.Write(v)
				}
			}
			out.WriteByte('\n')
		}
		return out.String()
	}
	want := "1|10|-3|alpha|t|1.5|12.340|2026-01-02|2026-11-30 12:34:56.789+00|0001ff\n" +
		"2|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL\n" +
		"3|-7|32767|tab\tand ünïcode|f|-0.25|-0.00001|1999-12-31|2026-11-30 11:34:56.789+00|\n"
	if got := read("bt"); got != want {
		t.Fatalf("rows after binary COPY:\n%s\nwant:\n%s", got, want)
	}
	var viewRows, viewN int64
	if err := conn.QueryRow(ctx, `SELECT rows, n FROM bt_sum`).Scan(&viewRows, &viewN); err != nil || viewRows != 3 || viewN != 3 {
		t.Fatalf("view after binary COPY: %d %d %v", viewRows, viewN, err)
	}

	// COPY TO in binary, then the same bytes back in.
	var dump bytes.Buffer
	if _, err := conn.PgConn().CopyTo(ctx, &dump, `COPY bt TO STDOUT WITH (FORMAT binary)`); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(dump.Bytes(), []byte("PGCOPY\n\377\r\n\x00")) || !bytes.HasSuffix(dump.Bytes(), []byte{0xff, 0xff}) {
		t.Fatalf("binary COPY TO output lacks the signature or trailer: %q", dump.Bytes())
	}
	tag, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(dump.Bytes()), `COPY bt2 FROM STDIN WITH (FORMAT binary)`)
	if err != nil || tag.RowsAffected() != 3 {
		t.Fatalf("binary round trip: %v %v", tag, err)
	}
	if got := read("bt2"); got != want {
		t.Fatalf("rows after the binary round trip:\n%s\nwant:\n%s", got, want)
	}

	// Malformed input: each fails as PostgreSQL does and loads nothing.
	good := dump.Bytes()
	header := len("PGCOPY\n\377\r\n\x00") + 8
	for name, data := range map[string][]byte{
		"bad signature":   append([]byte("PGCOPX"), good[6:]...),
		"truncated tuple": good[:len(good)-7],
		"cut header":      good[:8],
		"wrong count":     append(append(append([]byte(nil), good[:header]...), 0, 2), good[header+2:]...),
		"data after end":  append(append([]byte(nil), good...), 0),
	} {
		_, err := conn.PgConn().CopyFrom(ctx, bytes.NewReader(data), `COPY bt2 FROM STDIN WITH (FORMAT binary)`)
		var pe *pgconn.PgError
		if !asPgError(err, &pe) || pe.Code != "22P04" || !strings.HasPrefix(pe.Detail, "RS-2443") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if got := read("bt2"); got != want {
		t.Fatalf("a failed binary COPY changed the table:\n%s", got)
	}
	// Options that have no meaning in binary mode are refused.
	if _, err := conn.Exec(ctx, `COPY bt2 FROM STDIN WITH (FORMAT binary, HEADER)`); err == nil {
		t.Fatal("COPY FORMAT binary with HEADER was accepted")
	}
}

func asPgError(err error, pe **pgconn.PgError) bool { return errors.As(err, pe) }

// dialPgx connects pgx to url; the connection closes when the test ends.
func dialPgx(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}
