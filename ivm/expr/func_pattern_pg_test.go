package expr

import (
	"context"
	"testing"
	"time"

	"github.com/rockstream/rockstream/internal/pgtest"
)

// patternExprs exercise date_bin and the regular-expression functions
// against PostgreSQL 15 (text output or SQLSTATE must match).
var patternExprs = []string{
	"date_bin('10 seconds', '2024-02-05 13:04:07.5'::timestamp, '1970-01-01'::timestamp)",
	"date_bin('2 seconds', '2024-02-05 13:04:07'::timestamp, '2001-01-01'::timestamp)",
	"date_bin('15 minutes', '2020-02-11 15:44:17'::timestamp, '2001-01-01 00:02:30'::timestamp)",
	"date_bin('1 day 2 hours', '2020-02-11 15:44:17'::timestamp, '2001-01-01'::timestamp)",
	"date_bin('10 seconds', '1969-12-31 23:59:55'::timestamp, '1970-01-01'::timestamp)",
	"date_bin('10 seconds', '1969-12-31 23:59:50'::timestamp, '1970-01-01'::timestamp)",
	"date_bin('10 seconds', '2024-01-01 00:00:00'::timestamp, '2024-01-01 00:00:05'::timestamp)",
	"date_bin('1 month', '2024-01-01'::timestamp, '2024-01-01'::timestamp)",
	"date_bin('0 seconds', '2024-01-01'::timestamp, '2024-01-01'::timestamp)",
	"date_bin('-5 seconds', '2024-01-01'::timestamp, '2024-01-01'::timestamp)",
	"date_bin('10 seconds', 'infinity'::timestamp, '2024-01-01'::timestamp)",
	"date_bin('10 seconds', '2024-01-01'::timestamp, '-infinity'::timestamp)",
	"date_bin('1 microsecond', '2024-01-01 00:00:00.123456'::timestamp, '1970-01-01'::timestamp)",
	"date_bin('10 seconds', '2024-02-05 13:04:07+00'::timestamptz, '1970-01-01 00:00:00+00'::timestamptz)",
	"date_bin('10 seconds', NULL::timestamp, '1970-01-01'::timestamp)",
	"substring('https://www.nexmark.com/abc/item.htm?query=1&channel_id=1234' from '(?:&|^)channel_id=([^&]*)')",
	"substring('channel_id=77&x=1' from '(&|^)channel_id=([^&]*)')",
	"substring('no id here' from '(?:&|^)channel_id=([^&]*)')",
	"substring('foobar' from 'o.b')", "substring('foobar' from 'x')", "substring('foobar' from '(x)?b')",
	"substring('abcd' from 'a|ab')", "substring('aaa' from 'a*?')", "substring('xyz' from '[')",
	"substring('a\nb' from 'a.b')", "substring('Hello' from '(?i)h')",
	"substring('hello world' from '\\mworld')", "substring('abab' from '(ab)\\1')", "substring('abc' from 'a(?=b)')",
	"regexp_match('foobarbequebaz', 'bar.*que')", "regexp_match('foobarbequebaz', '(bar)(beque)')",
	"regexp_match('abc', 'x')", "regexp_match('ABC', 'b', 'i')", "regexp_match('abc', 'b', 'g')",
	"regexp_match('abc', '(x)?b')", "regexp_match('abc', 'b', 'z')",
	"regexp_like('Hello', 'h')", "regexp_like('Hello', 'h', 'i')", "regexp_like('Hello', 'x')",
	// A literal every match needs is looked for first: case-insensitive,
	// optional, alternative and repeated literals must not wrongly rule a
	// string out.
	"regexp_like('a Channel_Id=1', 'channel_id=', 'i')", "regexp_like('a channel_id=1', 'channel_id=', 'i')", "regexp_like('a CHANNEL_ID=1', 'channel_id=')",
	"substring('zzd' from '(abc)?d')", "substring('cd' from 'ab|cd')", "substring('xd' from '(?:abc)*d')",
	"substring('xabcabcd' from '(abc)+d')", "substring('xabcd' from '(abc){2}d')", "substring('xabcabcd' from '(abc){2,}d')",
	"regexp_match('q=1&channel_id=5&x', '(?:&|^)channel_id=([^&]*)')", "regexp_match('channel_id', 'channel_id=')",
}

func TestPatternFuncsMatchPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	env := &Env{TimeZone: time.UTC}
	if _, err := conn.Exec(ctx, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	unsupported := 0
	for _, sql := range patternExprs {
		want, wantNull, wantState, wantErr := pgtest.QueryText(ctx, conn, "SELECT "+sql)
		got, gotNull, gotState, err := evalSQL(sql, env)
		switch {
		case gotState == StateFeatureNotSupported && wantState != StateFeatureNotSupported:
			// ARE syntax RE2 lacks: rejected by name, never answered wrong.
			unsupported++
		case wantErr != nil && err == nil:
			t.Errorf("SELECT %s: PostgreSQL fails (%v), we return %q (null=%v)", sql, wantErr, got, gotNull)
		case wantErr == nil && err != nil:
			t.Errorf("SELECT %s: PostgreSQL returns %q, we fail: %v", sql, want, err)
		case wantErr != nil && gotState != wantState:
			t.Errorf("SELECT %s: PostgreSQL SQLSTATE %s (%v), we %s (%v)", sql, wantState, wantErr, gotState, err)
		case wantErr == nil && (got != want || gotNull != wantNull):
			t.Errorf("SELECT %s: PostgreSQL %q (null=%v), we %q (null=%v)", sql, want, wantNull, got, gotNull)
		}
	}
	if unsupported != 3 {
		t.Errorf("%d expressions rejected as unsupported ARE syntax, want 3 (\\m, \\1, lookahead)", unsupported)
	}
}
