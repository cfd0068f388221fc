package expr

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/pgtest"
	"github.com/rockstream/rockstream/ivm/types"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// pgExprs are scalar expressions evaluated by PostgreSQL 15 and by expr;
// the text output (or the SQLSTATE of the error) must be identical.
var pgExprs = []string{
	// Integer arithmetic and overflow.
	"1 + 2", "2147483647 + 1", "-2147483648 - 1", "2147483647 * 2", "(-2147483648) / -1", "(-2147483648) % -1",
	"7 / 2", "-7 / 2", "7 % 3", "-7 % 3", "7 % -3", "1 / 0", "1 % 0", "32767::int2 + 1::int2", "(-32768)::int2 * (-1)::int2",
	"32767::int2 + 1", "9223372036854775807 + 1", "(-9223372036854775808) / -1", "9223372036854775807::int8 * 2",
	"3000000000 * 3", "4611686018427387904 * 2", "-(-2147483648)", "-(-32768::int2)", "-(-9223372036854775807 - 1)",
	"5 & 3", "5 | 3", "5 # 3", "~5", "1 << 31", "1::int8 << 63", "-8 >> 1", "1::int2 << 15", "@ -5",
	"2 ^ 10", "2 ^ 0.5", "(-8) ^ (1.0/3)", "0 ^ -1", "2.0 ^ 3", "2::numeric ^ 100", "1.5 ^ 2.5", "0.1 ^ 3", "(-2.0) ^ 3",
	// Float arithmetic.
	"0.1::float8 + 0.2::float8", "1e308::float8 * 10", "1e-308::float8 / 1e10", "1::float8 / 0", "0::float8 / 0", "'NaN'::float8 / 0",
	"'Infinity'::float8 - 'Infinity'::float8", "'Infinity'::float8 * 0", "1.5::float4 + 1", "1::float4 / 3", "3.4e38::float4 * 10",
	"1e-45::float4 / 10", "1 + 1.5::float4", "1.5 + 1::float8", "2::float8 ^ 1024", "'-0'::float8", "- 0::float8", "1/3::float8",
	"100::float8 / 3", "1e15::float8", "1e16::float8 / 3", "123456789.123::float4",
	// Numeric arithmetic, scales, division.
	"1.50 + 2.2", "1.50 * 2.20", "5 / 2.0", "1 / 3.0", "10 / 4::numeric", "1::numeric / 3", "100000::numeric / 3", "2 / 3::numeric(10,5)",
	"1.0 / 7", "22::numeric / 7", "1e-10 / 3", "123456789012345678901234567890 / 7", "0 / 5.5", "0.000 / 3", "1 / 0.0", "5.5 % 2", "-5.5 % 2",
	"10 % 3.0", "'NaN'::numeric + 1", "'Infinity'::numeric - 'Infinity'::numeric", "'Infinity'::numeric * 0", "1 / 'Infinity'::numeric",
	"'Infinity'::numeric / 2", "0.1 + 0.2", "1.23e5 + 0", "-0.0", "99999999999999999999.99 + 0.01", "1.5::numeric(3,1) * 2",
	"12.345::numeric(4,2)", "999.995::numeric(5,2)", "1::numeric / 1e20", "1e20::numeric / 3", "7 / 0.0003", "0.0003 / 7",
	"div(7.5, 2)", "div(-7.5, 2)", "mod(7.5, 2)", "mod(-7, 3)", "mod(7::int2, 0::int2)",
	// Casts.
	"2.5::int4", "3.5::int4", "-2.5::int4", "2.5::float8::int4", "3.5::float8::int4", "-2.5::float8::int4", "'2.5'::numeric::int8",
	"2147483647.5::int4", "2147483647.4::int4", "'NaN'::numeric::int4", "'Infinity'::numeric::int8", "1e10::float8::int4", "'NaN'::float8::int8",
	"70000::int2", "0.1::float8::numeric", "(1/3::float8)::numeric", "1e300::float8::numeric(5,2)", "0.1::float4::numeric", "0.1::float4::float8",
	"1e39::float8::float4", "1e-50::float8::float4", "12345.678::numeric::float4", "'abc'::int4", "' 12 '::int4", "'12.5'::int4",
	"true::int4", "0::bool", "5::bool", "'yes'::bool", "'maybe'::bool", "true::text", "false::varchar", "123::text", "1.50::text",
	"'abcdef'::varchar(3)", "'abc'::char(5)::text", "'abc'::char(5) || 'x'", "'ab  '::char(4) = 'ab'::char(2)", "length('ab  '::char(4))",
	"'2024-01-31'::date::timestamp", "'2024-01-31 10:00'::timestamp::date", "'2024-01-31 10:00:05'::timestamp::time", "'1 day 02:03:04'::interval::time",
	"'10:00'::time::interval", "'2024-01-31'::date::text", "'{1,2,3}'::int4[]::text", "'{1.5,NULL}'::numeric[]", "'{a,\"b c\"}'::text[]",
	"'1.5'::float8", "'1e400'::float8", "'-'::int4", "''::int4", "'9223372036854775808'::int8", "'0x1A'::int4", "'1 000'::int4",
	"'\\x0a'::bytea", "'\\x0a'::bytea::text", "'abc'::bytea", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid::text",
	"123.456::numeric(5,1)", "123.456::numeric(2,1)", "'12:34:56.789'::time(1)", "'2024-01-31 10:00:00.555'::timestamp(2)",
	// Comparisons and three-valued logic.
	"1 = 1", "1 < 2", "1 <> 1", "1 != 2", "1 = NULL", "NULL = NULL", "1 = 1.0", "1 < 1.5::float8", "'a' < 'b'", "'a' < 'B'",
	"'abc' = 'abc '", "'abc'::char(5) = 'abc'", "'NaN'::float8 = 'NaN'::float8", "'NaN'::float8 > 'Infinity'::float8", "'-0'::float8 = 0::float8",
	"'NaN'::numeric > 'Infinity'::numeric", "1.0 = 1.00", "'1 mon'::interval = '30 days'::interval", "'1 day'::interval > '23:59:59'::interval",
	"'2024-01-01'::date < '2024-01-01 00:00:01'::timestamp", "'2024-01-01'::date = '2024-01-01 00:00'::timestamp",
	"true AND NULL", "false AND NULL", "true OR NULL", "false OR NULL", "NOT NULL::bool", "NULL::bool AND NULL::bool",
	"NULL IS NULL", "1 IS NOT NULL", "NULL::int IS NOT NULL", "true IS TRUE", "NULL::bool IS TRUE", "NULL::bool IS NOT TRUE",
	"false IS FALSE", "NULL::bool IS UNKNOWN", "true IS NOT UNKNOWN", "NULL::bool IS NOT FALSE",
	"1 IS DISTINCT FROM NULL", "NULL::int IS DISTINCT FROM NULL", "1 IS NOT DISTINCT FROM 1.0", "NULL::int IS NOT DISTINCT FROM NULL",
	"'a' IS DISTINCT FROM 'b'",
	// CASE, COALESCE, NULLIF, GREATEST, LEAST.
	"CASE WHEN 1 > 2 THEN 'a' ELSE 'b' END", "CASE WHEN NULL THEN 1 ELSE 2 END", "CASE 2 WHEN 1 THEN 'one' WHEN 2 THEN 'two' END",
	"CASE 3 WHEN 1 THEN 'one' END", "CASE WHEN true THEN 1 ELSE 2.5 END", "CASE WHEN false THEN 1 ELSE 1/0 END",
	"CASE NULL::int WHEN NULL THEN 'x' ELSE 'y' END", "CASE WHEN true THEN 1::int2 ELSE 2::int8 END", "CASE WHEN true THEN 1 ELSE 'a' END",
	"CASE WHEN true THEN 1 ELSE true END",
	"COALESCE(NULL, 2, 3)", "COALESCE(NULL::int, NULL)", "COALESCE(1, 2.5)", "COALESCE(NULL, 'a')", "COALESCE(1, 1/0)",
	"NULLIF(1, 1)", "NULLIF(1, 2)", "NULLIF(NULL::int, 1)", "NULLIF(1, 1.0)", "NULLIF('a', 'a')",
	"GREATEST(1, 2, 3)", "GREATEST(1, NULL, 3)", "LEAST(1, 2.5, -1)", "GREATEST(NULL::int, NULL)", "LEAST('b', 'a', 'c')",
	"GREATEST('NaN'::float8, 1)", "LEAST(1, 'x')",
	// IN, BETWEEN.
	"1 IN (1, 2)", "3 IN (1, 2)", "3 IN (1, NULL)", "1 IN (1, NULL)", "NULL::int IN (1, 2)", "3 NOT IN (1, 2)", "3 NOT IN (1, NULL)",
	"1 NOT IN (1, NULL)", "1.5 IN (1, 1.5)", "'a' IN ('a', 'b')", "1 IN (1.0, 2)",
	"2 BETWEEN 1 AND 3", "2 BETWEEN 3 AND 1", "2 BETWEEN SYMMETRIC 3 AND 1", "2 NOT BETWEEN 1 AND 3", "NULL::int BETWEEN 1 AND 2",
	"1 BETWEEN NULL AND 2", "5 BETWEEN NULL AND 2", "1.5 BETWEEN 1 AND 2", "2 NOT BETWEEN SYMMETRIC 3 AND 1",
	// LIKE / ILIKE / regex.
	"'abc' LIKE 'a%'", "'abc' LIKE 'a_c'", "'abc' LIKE 'A%'", "'abc' ILIKE 'A%'", "'abc' NOT LIKE '%b%'", "'a%c' LIKE 'a\\%c'",
	"'abc' LIKE 'a\\%c'", "'a_c' LIKE 'a#_c' ESCAPE '#'", "'abc' LIKE 'abc\\'", "'' LIKE '%'", "'' LIKE '_'", "NULL LIKE 'a'",
	"'héllo' LIKE 'h_llo'", "'abcabc' LIKE '%bc%bc'", "'aaa' LIKE '%a%a%a%a'", "'x' LIKE 'x' ESCAPE ''", "'%' LIKE '%' ESCAPE ''",
	"'ABC' NOT ILIKE 'a_c'", "'abc' ~ '^a.c$'", "'xAbCx' ~* 'abc'", "'abc' !~ 'b'", "'zzz' !~ 'abc'", "'zzz' ~ 'abc'", "'xabcx' ~ 'a(b)c'", "'ac' ~ 'a(b)?c'",
	"'q=1&channel' ~ '(&|^)channel_id='", "'q=1&channel_id=2' ~ '(&|^)channel_id='", "'AC' ~* 'a(b)*C'", "'abc' ~* 'B'", "'abc' !~ 'z'", "'abc' !~* 'A'", "'abc' ~ '('",
	// Strings.
	"'a' || 'b'", "'a' || 1", "1 || 'a'", "'a' || NULL", "'a' || true", "'a' || 1.50", "length('héllo')", "octet_length('héllo')",
	"char_length('abc')", "lower('ABC Déf')", "upper('abc déf')", "initcap('hello wORLD foo-bar')", "substr('hello', 2)", "substr('hello', 2, 3)",
	"substr('hello', 0, 2)", "substr('hello', -1, 3)", "substr('hello', 2, -1)", "substring('hello' from 2 for 2)", "position('l' in 'hello')",
	"strpos('hello', 'z')", "replace('hello', 'l', 'L')", "replace('hello', '', 'x')", "trim('  x  ')", "trim(both 'x' from 'xxaxx')",
	"ltrim('  x  ')", "rtrim('xay', 'y')", "btrim('xyaxy', 'xy')", "lpad('ab', 5)", "lpad('ab', 5, 'xy')", "lpad('abcdef', 3)",
	"rpad('ab', 5, 'xy')", "rpad('ab', -1)", "left('hello', 2)", "left('hello', -2)", "right('hello', 2)", "right('hello', -2)",
	"concat('a', NULL, 1, true, 1.50)", "concat_ws(',', 'a', NULL, 'b')", "concat_ws(NULL, 'a')", "split_part('a,b,c', ',', 2)",
	"split_part('a,b,c', ',', 5)", "split_part('a,,b,', ',', 2)", "split_part('a,,b,', ',', 4)", "split_part('a,,b,', ',', 5)",
	"split_part('a<>b<>c', '<>', 3)", "split_part('abc', 'abc', 1)", "split_part('abc', 'abc', 2)", "split_part('abc', '', 1)", "split_part('abc', '', 2)",
	"split_part('', ',', 1)", "split_part('a<>b', '<>', -2)", "'abc'::varchar(5)::text", "'abc'::text::varchar", "'abcdef'::varchar::varchar(3)", "split_part('a,b,c', ',', -1)", "split_part('a,b,c', ',', 0)", "starts_with('hello', 'he')",
	"reverse('héllo')", "repeat('ab', 3)", "repeat('ab', -1)", "md5('abc')", "ascii('A')", "chr(65)", "chr(0)", "to_hex(255)",
	"to_hex(-1)", "to_hex(-1::int8)", "translate('hello', 'el', 'ip')", "encode('\\x0102'::bytea, 'hex')", "encode('abc'::bytea, 'base64')",
	"decode('0102', 'hex')", "'\\x01'::bytea || '\\x02'::bytea", "length('\\x0102'::bytea)",
	// Math functions.
	"abs(-5)", "abs(-5.5)", "abs((-2147483648)::int4)", "abs(-1.5::float8)", "round(2.5)", "round(-2.5)", "round(2.5::float8)",
	"round(3.5::float8)", "round(1.2345, 2)", "round(1.2355, 3)", "round(1234.5, -2)", "round(5)", "round(1.5::float4)", "trunc(1.789, 1)",
	"trunc(-1.789)", "trunc(1.789::float8)", "ceil(1.2)", "ceil(-1.2)", "ceiling(1.2::float8)", "floor(-1.2)", "floor(1.8::float8)",
	"sign(-3.5)", "sign(0::float8)", "sign(2)", "sqrt(2)", "sqrt(2.0)", "sqrt(16::numeric)", "sqrt(-1)", "sqrt(-1.0)", "sqrt(0.0001)",
	"sqrt(1e20::numeric)", "cbrt(8)", "exp(1)", "exp(1.0)", "exp(0.5::numeric)", "ln(10)", "ln(10.0)", "ln(0)", "ln(-1.0)", "log(100)",
	"log(100.0)", "log(2.0, 8)", "log10(1000)", "power(2, 10)", "power(2.0, 10)", "power(2, 0.5)", "pow(1.1, 2)", "pi()", "degrees(pi())",
	"mod(10, 3)", "mod(10.5, 3)", "sin(0)", "atan2(1, 1)",
	// Dates, times, intervals.
	"'2024-01-31'::date + 1", "'2024-12-31'::date + 1", "1 + '2024-01-31'::date", "'2024-03-01'::date - 1", "'2024-03-01'::date - '2024-01-01'::date",
	"'2024-01-31'::date + '1 month'::interval", "'2024-01-31 10:00'::timestamp + '1 month'::interval", "'2024-02-29'::timestamp + '1 year'::interval",
	"'2024-01-01'::timestamp - '1 day 2 hours'::interval", "'2024-03-01'::timestamp - '2024-01-01 12:00'::timestamp",
	"'2024-01-01'::timestamp - '2024-03-01'::timestamp", "'2024-01-01'::date + '10:30'::time", "'10:00'::time + '3 hours'::interval",
	"'22:00'::time + '3 hours'::interval", "'10:00'::time - '09:30'::time", "'1 day'::interval + '2 hours'::interval", "'1 day'::interval - '1 mon'::interval",
	"'1 day'::interval * 2", "'2 seconds'::interval * -3", "3 * '1 mon 2 days 3.5 seconds'::interval", "-2 * '-1 day -1 microsecond'::interval",
	"'1 mon'::interval * 2147483647", "'2 mon'::interval * 2147483647", "'-1 day'::interval * 2147483648", "'100000000 hours'::interval * 100000",
	"'3002399751.580330 seconds'::interval * 3", "'3002399751.580331 seconds'::interval * 3", "'1 day'::interval * 0", "'1 day 1 second'::interval * -0.0",
	"'1 mon'::interval * 1.5", "'1 day'::interval / 3", "'1 hour'::interval / 0", "2 * '1 day 3 hours'::interval",
	"-'1 day 3 hours'::interval", "'2024-01-01 10:00+00'::timestamptz + '1 day'::interval", "'2024-01-01 10:00+00'::timestamptz - '2023-12-31 09:00+00'::timestamptz",
	"'infinity'::date + 1", "'infinity'::timestamp + '1 day'::interval", "'5874897-12-31'::date + 1",
	"date_trunc('month', '2024-02-15 10:11:12'::timestamp)", "date_trunc('year', '2024-02-15 10:11:12'::timestamp)",
	"date_trunc('week', '2024-02-15 10:11:12'::timestamp)", "date_trunc('quarter', '2024-05-15'::timestamp)", "date_trunc('hour', '2024-02-15 10:11:12'::timestamp)",
	"date_trunc('decade', '2024-02-15'::timestamp)", "date_trunc('century', '2024-02-15'::timestamp)", "date_trunc('millennium', '2024-02-15'::timestamp)",
	"date_trunc('milliseconds', '2024-02-15 10:11:12.345678'::timestamp)", "date_trunc('day', '2024-02-15 10:11:12+00'::timestamptz)",
	"date_trunc('bogus', '2024-02-15'::timestamp)", "date_trunc('hour', '1 day 10:11:12'::interval)", "date_trunc('year', '14 mons'::interval)",
	"extract(year from '2024-02-15 10:11:12.5'::timestamp)", "extract(second from '2024-02-15 10:11:12.5'::timestamp)",
	"extract(milliseconds from '2024-02-15 10:11:12.5'::timestamp)", "extract(microseconds from '2024-02-15 10:11:12.5'::timestamp)",
	"extract(epoch from '2024-02-15 10:11:12.5'::timestamp)", "extract(epoch from '2024-02-15'::date)", "extract(dow from '2024-02-15'::date)",
	"extract(isodow from '2024-02-18'::date)", "extract(doy from '2024-12-31'::date)", "extract(week from '2024-01-01'::date)",
	"extract(isoyear from '2021-01-01'::date)", "extract(quarter from '2024-08-01'::date)", "extract(century from '2000-12-31'::date)",
	"extract(millennium from '2001-01-01'::date)", "extract(decade from '2024-01-01'::date)", "extract(hour from '2024-01-01'::date)",
	"extract(year from '0044-03-15 BC'::date)", "extract(epoch from '1 day 02:00:00.5'::interval)", "extract(epoch from '1 year 1 mon'::interval)",
	"extract(minute from '1 day 02:03:04'::interval)", "extract(month from '14 mons'::interval)", "extract(year from 'infinity'::timestamp)",
	"extract(day from 'infinity'::timestamp)", "extract(timezone from '2024-01-01 10:00+00'::timestamptz)", "extract(hour from '10:11:12'::time)",
	"extract(julian from '2024-01-01'::date)", "extract(julian from '2024-01-01 12:00'::timestamp)",
	"date_part('year', '2024-02-15'::timestamp)", "date_part('second', '2024-02-15 10:11:12.5'::timestamp)", "date_part('epoch', '2024-02-15 10:11:12.5'::timestamp)",
	"date_part('day', '3 days 04:00'::interval)", "make_date(2024, 2, 29)", "make_date(2023, 2, 29)", "make_date(-44, 3, 15)", "make_date(0, 1, 1)",
	"make_timestamp(2024, 1, 31, 10, 11, 12.5)", "make_interval(1, 2, 3, 4, 5, 6, 7.5)", "age('2024-03-01'::timestamp, '2023-01-31'::timestamp)",
	"age('2023-01-31'::timestamp, '2024-03-01 10:00'::timestamp)", "age('2024-02-29 10:00'::timestamp, '2024-02-28 12:00'::timestamp)",
	"to_timestamp(0)", "to_timestamp(1700000000.5)", "justify_hours('50 hours'::interval)", "justify_days('65 days'::interval)",
	"justify_interval('1 mon -1 hour'::interval)", "isfinite('infinity'::date)", "isfinite('2024-01-01'::timestamp)",
	// to_char, regexp_replace.
	"to_char('2024-02-05 13:04:05.123456'::timestamp, 'YYYY-MM-DD HH24:MI:SS.US')", "to_char('2024-02-05 13:04:05'::timestamp, 'Day, DD Month YYYY HH12:MI AM')",
	"to_char('2024-02-05 01:04:05'::timestamp, 'FMDay FMDD FMMonth Dy Mon MON mon day DAY')", "to_char('2024-02-05'::timestamp, 'Q WW IW DDD D J CC YY Y IYYY')",
	"to_char('2024-02-05 13:04:05.5'::timestamp, 'HH:MI:SS.MS pm \"at\" \"quoted\"')", "to_char('0044-03-15'::timestamp, 'YYYY BC')",
	"to_char('2024-02-05 13:04:05+00'::timestamptz, 'YYYY-MM-DD HH24:MI TZ OF')", "to_char('2024-12-30'::date, 'IYYY-IW-ID')",
	"regexp_replace('hello world', 'o', '0')", "regexp_replace('hello world', 'o', '0', 'g')", "regexp_replace('abc', '(b)', '[\\1\\&]')",
	"regexp_replace('ABC', 'b', 'x', 'gi')", "regexp_replace('a$b', '\\$', 'd')",
	// ANY / ALL.
	"1 = ANY('{1,2}'::int4[])", "3 = ANY('{1,2}')", "3 = ANY('{1,NULL}'::int4[])", "1 = ANY('{1,NULL}'::int4[])", "NULL::int = ANY('{}'::int4[])",
	"NULL::int = ALL('{}'::int4[])", "2 > ALL('{1,0}'::int4[])", "2 > ALL('{1,NULL}'::int4[])", "0 > ALL('{1,NULL}'::int4[])",
	"1.5 = ANY('{1,2}'::int4[])", "'a' = ANY('{a,b}'::text[])", "1 = ANY(NULL::int4[])", "'a' LIKE ANY('{x%,a%}'::text[])",
	// Misc.
	"num_nulls(1, NULL, NULL)", "num_nonnulls(1, NULL, 'a')", "cardinality('{1,2,3}'::int4[])", "array_length('{1,2}'::int4[], 1)",
	"'{1,2}'::int4[] || 3", "'{1,2}'::int4[] || '{3}'::int4[]", "'{1,2}'::int4[] = '{1,2}'::int4[]", "'{1,2}'::int4[] < '{1,3}'::int4[]",
}

// bindOrState binds an expression and evaluates it, returning its text,
// whether it is NULL, and the SQLSTATE of an error.
func evalSQL(sql string, env *Env) (text string, isNull bool, state string, err error) {
	e, err := bindSQL(sql)
	if err == nil {
		e, err = Fold(e)
	}
	if err == nil {
		var v types.Datum
		v, err = e.Eval(env, nil)
		if err == nil {
			if v == nil {
				return "", true, "", nil
			}
			return types.FormatTZ(e.Type(), v, envZone(env)), false, "", nil
		}
	}
	if ce, ok := errcode.As(err); ok {
		return "", false, ce.State(), err
	}
	return "", false, "?????", err
}

func TestExprsMatchPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	env := &Env{TimeZone: time.UTC}
	failures := 0
	for _, sql := range pgExprs {
		want, wantNull, wantState, wantErr := pgtest.QueryText(ctx, conn, "SELECT "+sql)
		got, gotNull, gotState, err := evalSQL(sql, env)
		switch {
		case wantErr != nil && err == nil:
			t.Errorf("SELECT %s: PostgreSQL fails (%v), we return %q (null=%v)", sql, wantErr, got, gotNull)
		case wantErr == nil && err != nil:
			t.Errorf("SELECT %s: PostgreSQL returns %q, we fail: %v", sql, want, err)
		case wantErr != nil && gotState != wantState:
			t.Errorf("SELECT %s: PostgreSQL SQLSTATE %s (%v), we %s (%v)", sql, wantState, wantErr, gotState, err)
		case wantErr == nil && (got != want || gotNull != wantNull):
			t.Errorf("SELECT %s: PostgreSQL %q (null=%v), we %q (null=%v)", sql, want, wantNull, got, gotNull)
		default:
			continue
		}
		failures++
	}
	t.Logf("%d expressions, %d mismatches", len(pgExprs), failures)
}

// TestResultTypesMatchPostgres checks type resolution: pg_typeof of each
// expression must name our result type.
func TestResultTypesMatchPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	for _, sql := range pgExprs {
		e, err := bindSQL(sql)
		if err != nil {
			continue
		}
		want, _, _, werr := pgtest.QueryText(ctx, conn, "SELECT pg_typeof("+sql+")")
		if werr != nil {
			continue
		}
		got := e.Type().SQLName()
		if k := e.Type(); k.Typmod >= 0 {
			got = types.Type{Kind: k.Kind, Typmod: -1, Elem: k.Elem}.SQLName()
		}
		if strings.HasSuffix(want, "[]") && e.Type().Kind == types.KindArray {
			got = strings.TrimSuffix(got, "[]") + "[]"
		}
		if got != want {
			t.Errorf("pg_typeof(%s): PostgreSQL %s, we %s", sql, want, got)
		}
	}
}

// TestTimeZoneExprsMatchPostgres evaluates session-time-zone dependent
// expressions under several zones.
func TestTimeZoneExprsMatchPostgres(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	exprs := []string{
		"'2024-03-09 12:00'::timestamptz + '1 day'::interval", "'2024-03-09 12:00'::timestamptz + '24 hours'::interval",
		"'2024-11-02 12:00'::timestamptz + '1 day'::interval", "'2024-01-31 12:00'::timestamptz + '1 mon'::interval",
		"'2024-03-10 12:00'::timestamptz - '2024-03-09 12:00'::timestamptz", "'2024-03-10'::timestamp::timestamptz",
		"'2024-03-10 02:30'::timestamp::timestamptz", "'2024-11-03 01:30'::timestamp::timestamptz", "'2024-03-10 12:00+00'::timestamptz::timestamp",
		"'2024-03-10 03:00+00'::timestamptz::date", "'2024-03-10'::date::timestamptz", "'2024-03-10 12:00+00'::timestamptz::time",
		"date_trunc('day', '2024-03-10 12:00+00'::timestamptz)", "date_trunc('month', '2024-03-31 23:30-05'::timestamptz)",
		"date_trunc('hour', '2024-11-03 05:30+00'::timestamptz)", "date_trunc('day', '2024-03-10 12:00+00'::timestamptz, 'Asia/Tokyo')",
		"extract(hour from '2024-03-10 12:00+00'::timestamptz)", "extract(timezone from '2024-07-01 12:00+00'::timestamptz)",
		"extract(epoch from '2024-03-10 12:00+00'::timestamptz)", "extract(day from '2024-03-10 02:00+00'::timestamptz)",
		"'2024-03-10 12:00+00'::timestamptz::text", "concat('2024-03-10 12:00+00'::timestamptz)",
		"age('2024-03-10 12:00+00'::timestamptz, '2024-01-01 00:00+00'::timestamptz)", "to_timestamp(1700000000)",
		"'{\"2024-01-01 00:00+00\"}'::timestamptz[]", "'2024-06-01 12:00'::timestamptz = '2024-06-01 12:00'::timestamp",
		// AT TIME ZONE (timezone()).
		"'2024-03-10 12:00+00'::timestamptz AT TIME ZONE 'America/New_York'", "'2024-03-10 02:30'::timestamp AT TIME ZONE 'America/New_York'",
		"'2024-11-03 01:30'::timestamp AT TIME ZONE 'America/New_York'", "'2024-03-10 12:00+00'::timestamptz AT TIME ZONE 'utc'",
		"'2024-03-10 12:00'::timestamp AT TIME ZONE 'UTC'", "'2024-03-10 12:00+00'::timestamptz AT TIME ZONE '+05'",
		"'2024-03-10 12:00+00'::timestamptz AT TIME ZONE '-03:30'", "'2024-03-10 12:00'::timestamp AT TIME ZONE '+05'",
		"'2024-03-10 12:00+00'::timestamptz AT TIME ZONE INTERVAL '-08:00'", "'2024-03-10 12:00'::timestamp AT TIME ZONE INTERVAL '05:30'",
		"'2024-03-10 12:00+00'::timestamptz AT TIME ZONE INTERVAL '1 day'", "'infinity'::timestamptz AT TIME ZONE 'UTC'",
		"'-infinity'::timestamp AT TIME ZONE 'Asia/Tokyo'", "'2024-03-10 12:00+00'::timestamptz AT TIME ZONE 'Nowhere/Bogus'",
		"timezone('Asia/Kolkata', '2024-03-10 12:00+00'::timestamptz)", "'2024-07-01 12:00'::timestamp AT TIME ZONE 'Europe/London' AT TIME ZONE 'Asia/Tokyo'",
	}
	for _, zone := range []string{"UTC", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Europe/London"} {
		if _, _, _, err := pgtest.QueryText(ctx, conn, "SET TimeZone = '"+zone+"'"); err != nil {
			t.Fatal(err)
		}
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		env := &Env{TimeZone: loc}
		for _, sql := range exprs {
			want, wantNull, wantState, wantErr := pgtest.QueryText(ctx, conn, "SELECT "+sql)
			got, gotNull, gotState, err := evalSQL(sql, env)
			if (wantErr == nil) != (err == nil) || gotState != wantState || got != want || gotNull != wantNull {
				t.Errorf("[%s] SELECT %s: PostgreSQL %q/%s/%v, we %q/%s/%v", zone, sql, want, wantState, wantErr, got, gotState, err)
			}
		}
	}
	if _, _, _, err := pgtest.QueryText(ctx, conn, "SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
}

// TestCommonTypeMatchesUnion resolves UNION column types like PostgreSQL.
func TestCommonTypeMatchesUnion(t *testing.T) {
	conn := pgtest.Connect(t)
	ctx := context.Background()
	lits := map[string]string{
		"int2": "1::int2", "int4": "1", "int8": "1::int8", "numeric": "1.5", "float4": "1::float4", "float8": "1::float8",
		"text": "'a'::text", "varchar": "'a'::varchar", "char": "'a'::char(2)", "unknown": "'a'", "date": "'2024-01-01'::date",
		"timestamp": "'2024-01-01'::timestamp", "timestamptz": "'2024-01-01'::timestamptz", "interval": "'1 day'::interval",
		"bool": "true", "time": "'10:00'::time", "varchar(3)": "'a'::varchar(3)", "numeric(5,2)": "1.5::numeric(5,2)",
	}
	tys := map[string]types.Type{
		"int2": types.TInt2, "int4": types.TInt4, "int8": types.TInt8, "numeric": types.TNumeric, "float4": types.TFloat4,
		"float8": types.TFloat8, "text": types.TText, "varchar": types.TVarchar, "char": {Kind: types.KindChar, Typmod: 6},
		"unknown": types.TUnknown, "date": types.TDate, "timestamp": types.TTimestamp, "timestamptz": types.TTimestampTZ,
		"interval": types.TInterval, "bool": types.TBool, "time": types.TTime, "varchar(3)": {Kind: types.KindVarchar, Typmod: 7},
		"numeric(5,2)": {Kind: types.KindNumeric, Typmod: types.MakeNumericTypmod(5, 2)},
	}
	cases := [][]string{
		{"int2", "int4"}, {"int4", "int8"}, {"int8", "numeric"}, {"numeric", "float4"}, {"float4", "float8"}, {"int4", "float4"},
		{"int4", "unknown"}, {"unknown", "unknown"}, {"unknown", "int4"}, {"text", "varchar"}, {"varchar", "text"}, {"char", "varchar"},
		{"varchar", "char"}, {"date", "timestamp"}, {"timestamp", "timestamptz"}, {"date", "timestamptz"}, {"int4", "text"},
		{"bool", "int4"}, {"time", "interval"}, {"interval", "time"}, {"varchar(3)", "varchar(3)"}, {"varchar(3)", "varchar"},
		{"numeric(5,2)", "numeric(5,2)"}, {"numeric(5,2)", "int4"}, {"int2", "int2", "numeric"}, {"date", "text"},
		{"unknown", "date"}, {"char", "char"},
	}
	for _, c := range cases {
		var sels []string
		var ts []types.Type
		for _, name := range c {
			lit := lits[name]
			if name == "unknown" {
				// An untyped literal that every candidate type accepts.
				lit = "'1'"
				if strings.Contains(strings.Join(c, ","), "date") {
					lit = "'2024-01-01'"
				}
			}
			sels = append(sels, "SELECT "+lit+" AS x")
			ts = append(ts, tys[name])
		}
		q := "SELECT format_type(pg_typeof(x)::oid, NULL) || coalesce('', '') FROM (" + strings.Join(sels, " UNION ALL ") + ") s LIMIT 1"
		want, _, wantState, wantErr := pgtest.QueryText(ctx, conn, q)
		got, err := CommonType("UNION", ts...)
		switch {
		case wantErr != nil && err == nil:
			t.Errorf("%v: PostgreSQL fails (%s), we resolve %s", c, wantState, got)
		case wantErr == nil && err != nil:
			t.Errorf("%v: PostgreSQL %s, we fail: %v", c, want, err)
		case wantErr != nil:
			if ce, ok := errcode.As(err); !ok || ce.State() != wantState {
				t.Errorf("%v: PostgreSQL SQLSTATE %s, we %v", c, wantState, err)
			}
		case types.Type{Kind: got.Kind, Typmod: -1}.SQLName() != want:
			t.Errorf("%v: PostgreSQL %s, we %s", c, want, got)
		}
	}
}
