package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestCopyFromStdin(t *testing.T) {
	ctx := context.Background()
	c := connectGateway(t, "")
	execOne(t, c, "drop table if exists copy_t; create table copy_t(id int primary key, name text, amount numeric(10,2), ts timestamptz, tags text[])")

	// Text format: escapes, NULL, the \. end marker psql sends.
	text := "1\talice\t1.50\t2024-01-01 10:00:00+00\t{a,b}\n" +
		"2\tb\\tob\\\\x\t\\N\t\\N\t{}\n" +
		"3\tcarol\\nline2\t-3\t2024-06-01 12:00:00+02\t\\N\n" +
		"\\.\n"
	tag, err := c.CopyFrom(ctx, strings.NewReader(text), "copy copy_t from stdin")
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("COPY text: %v %v", tag, err)
	}
	rows, _ := execOne(t, c, "select id, name, amount, ts, tags from copy_t order by id")
	want := [][]string{
		{"1", "alice", "1.50", "2024-01-01 10:00:00+00", "{a,b}"},
		{"2", "b\tob\\x", "<null>", "<null>", "{}"},
		{"3", "carol\nline2", "-3.00", "2024-06-01 10:00:00+00", "<null>"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("after text COPY:\n got %q\nwant %q", rows, want)
	}

	// CSV with a header, quoted delimiters and newlines, and a column list.
	csv := "id,name\n10,\"x, \"\"quoted\"\"\"\n11,\"multi\nline\"\n12,\n13,\"\"\n"
	tag, err = c.CopyFrom(ctx, strings.NewReader(csv), "copy copy_t (id, name) from stdin with (format csv, header true)")
	if err != nil || tag.String() != "COPY 4" {
		t.Fatalf("COPY csv: %v %v", tag, err)
	}
	rows, _ = execOne(t, c, "select id, name from copy_t where id >= 10 order by id")
	want = [][]string{{"10", `x, "quoted"`}, {"11", "multi\nline"}, {"12", "<null>"}, {"13", ""}}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("after CSV COPY:\n got %q\nwant %q", rows, want)
	}

	// A bad row fails the whole COPY with its line number; nothing commits.
	before := scalar(t, c, "select count(*) from copy_t")
	bad := "20\tok\t1\t\\N\t\\N\n21\tok\t2\t\\N\t\\N\n22\tbad\tnot-a-number\t\\N\t\\N\n23\tok\t3\t\\N\t\\N\n"
	_, err = c.CopyFrom(ctx, strings.NewReader(bad), "copy copy_t from stdin")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22P02" || !strings.Contains(pe.Detail, "line 3") || !strings.HasPrefix(pe.Detail, "RS-2441 copy.invalid_value") {
		t.Fatalf("bad row: %v (%+v)", err, pe)
	}
	if after := scalar(t, c, "select count(*) from copy_t"); after != before {
		t.Errorf("failed COPY committed rows: %s → %s", before, after)
	}
	_, err = c.CopyFrom(ctx, strings.NewReader("30\tx\n"), "copy copy_t from stdin")
	if !errors.As(err, &pe) || pe.Code != "22P04" || !strings.Contains(pe.Message, `missing data for column "amount"`) {
		t.Fatalf("short row: %v", err)
	}
	_, err = c.CopyFrom(ctx, strings.NewReader("30\tx\t1\t\\N\t\\N\textra\n"), "copy copy_t from stdin")
	if !errors.As(err, &pe) || pe.Code != "22P04" {
		t.Fatalf("long row: %v", err)
	}
	if got := scalar(t, c, "select 'alive'"); got != "alive" {
		t.Error("connection after failed COPY")
	}

	// Inside an explicit block a failed COPY aborts the block.
	execOne(t, c, "begin")
	execOne(t, c, "insert into copy_t(id) values (40)")
	if _, err := c.CopyFrom(ctx, strings.NewReader("x\n"), "copy copy_t(id) from stdin"); err == nil {
		t.Fatal("bad COPY in block succeeded")
	}
	if c.TxStatus() != 'E' {
		t.Errorf("status %c after failed COPY in block", c.TxStatus())
	}
	execOne(t, c, "rollback")
	if got := scalar(t, c, "select count(*) from copy_t where id = 40"); got != "0" {
		t.Error("rolled-back block kept a row")
	}

	// Large COPY: chunks never exceed copyChunkRowsMax.
	var big bytes.Buffer
	for i := 0; i < 21_000; i++ {
		fmt.Fprintf(&big, "%d\tn%d\t%d.25\t\\N\t\\N\n", 1000+i, i, i)
	}
	testEngine.mu.Lock()
	testEngine.copyChunks = nil
	testEngine.mu.Unlock()
	tag, err = c.CopyFrom(ctx, &big, "copy copy_t from stdin")
	if err != nil || tag.String() != "COPY 21000" {
		t.Fatalf("big COPY: %v %v", tag, err)
	}
	testEngine.mu.Lock()
	chunks := append([]int(nil), testEngine.copyChunks...)
	testEngine.mu.Unlock()
	if fmt.Sprint(chunks) != "[10000 10000 1000]" {
		t.Errorf("chunks %v", chunks)
	}
	if got := scalar(t, c, "select count(*) from copy_t where id >= 1000"); got != "21000" {
		t.Errorf("big COPY rows: %s", got)
	}

	// Unsupported forms are refused with RS codes.
	for q, code := range map[string]string{
		"copy copy_t from '/etc/passwd'":                             "42601",
		"copy copy_t from stdin with (format binary, delimiter ',')": "42601",
		"copy copy_t to program 'ls'":                                "42601",
		"copy copy_t from stdin with (format unknown)":               "42601",
	} {
		if pe := execErr(t, c, q); pe.Code != code || !strings.HasPrefix(pe.Detail, "RS-") {
			t.Errorf("%s: %s %q", q, pe.Code, pe.Detail)
		}
	}
}

func TestCopyToStdoutMatchesPostgres(t *testing.T) {
	ctx := context.Background()
	c := connectGateway(t, "")
	direct, err := pgconn.Connect(ctx, testPG.connString())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close(ctx)
	execOne(t, c, `drop table if exists copy_out; create table copy_out(id int, s text, n numeric, b bytea, a int[]);
		insert into copy_out values (1, E'tab\there', 1.5, '\x0102', '{1,2}'), (2, NULL, NULL, NULL, NULL),
		(3, 'comma, "quote"', -0.25, '', '{}'), (4, '', 0, '\x', '{NULL}'), (5, E'back\\slash\nnl', 1e10, 'x', '{3}')`)
	for _, q := range []string{
		"copy copy_out to stdout",
		"copy copy_out (s, id) to stdout",
		"copy (select * from copy_out order by id desc) to stdout with (format csv, header)",
		"copy copy_out to stdout with csv",
		"copy (select id, s from copy_out where id > 2) to stdout with (delimiter '|', null 'NIL')",
	} {
		var want, got bytes.Buffer
		wantTag, err := direct.CopyTo(ctx, &want, q)
		if err != nil {
			t.Fatalf("postgres %s: %v", q, err)
		}
		gotTag, err := c.CopyTo(ctx, &got, q)
		if err != nil {
			t.Fatalf("gateway %s: %v", q, err)
		}
		if want.String() != got.String() || wantTag.String() != gotTag.String() {
			t.Errorf("%s\npostgres %s:\n%q\ngateway %s:\n%q", q, wantTag, want.String(), gotTag, got.String())
		}
	}
}
