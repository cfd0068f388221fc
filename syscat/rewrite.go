package syscat

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Rewrite adapts the catalog queries psql 15 sends for its meta-commands to
// what RockStream's compiler supports, keeping their results: each rewrite
// below is exact for RockStream's catalogs (no policies, no extended
// statistics, no publications, no role memberships, no composite types, no
// non-default collations, no TOAST tables, at most one default per column).
// Other statements are returned unchanged. The rewrites key on psql 15's
// literal query text (src/bin/psql/describe.c), which is stable per release.
//
// Rewrite also resolves 'name'::regclass literals (pgjdbc, SQLAlchemy) to
// the relation's oid through cat, since casts from text to regclass are
// evaluated without a catalog.
func Rewrite(sql string, cat catalog.Catalog) string {
	if strings.Contains(sql, "regclass") {
		sql = regclassLiteral.ReplaceAllStringFunc(sql, func(m string) string {
			lit := regclassLiteral.FindStringSubmatch(m)[1]
			if oid, ok := resolveRegclass(lit, cat); ok {
				return "'" + strconv.FormatInt(oid, 10) + "'::pg_catalog.regclass"
			}
			return m
		})
	}
	if !strings.Contains(sql, "pg_") {
		return sql
	}
	trimmed := strings.TrimSpace(sql)
	for _, w := range wholeStatements {
		if strings.HasPrefix(trimmed, w.prefix) && strings.Contains(trimmed, w.contains) {
			return w.replacement
		}
	}
	for _, r := range fragmentRules() {
		if r.when.MatchString(sql) {
			for _, f := range r.edits {
				sql = f.re.ReplaceAllLiteralString(sql, f.new)
			}
		}
	}
	return sql
}

type wholeStatement struct{ prefix, contains, replacement string }

// wholeStatements read relations that are always empty in RockStream; the
// replacement returns no rows with the same column count.
//
//lint:immutable a constant table of rewrites.
var wholeStatements = []wholeStatement{
	// \d: row-level security policies (pg_policy is empty).
	{"SELECT pol.polname, pol.polpermissive,", "FROM pg_catalog.pg_policy pol",
		"SELECT NULL::pg_catalog.name AS polname, NULL::bool AS polpermissive, NULL::text AS roles, NULL::text AS qual, NULL::text AS withcheck, NULL::text AS cmd WHERE false"},
	// \d: extended statistics (pg_statistic_ext is empty).
	{"SELECT oid, stxrelid::pg_catalog.regclass,", "FROM pg_catalog.pg_statistic_ext",
		"SELECT NULL::oid AS oid, NULL::pg_catalog.regclass AS stxrelid, NULL::text AS nsp, NULL::pg_catalog.name AS stxname, NULL::text AS columns, NULL::bool AS ndist_enabled, NULL::bool AS deps_enabled, NULL::bool AS mcv_enabled, NULL::integer AS stxstattarget WHERE false"},
	// \d: publications (pg_publication is empty).
	{"SELECT pubname", "FROM pg_catalog.pg_publication p",
		"SELECT NULL::pg_catalog.name AS pubname, NULL::text AS qual, NULL::text AS attrs WHERE false"},
}

// fragment is one edit: a whitespace-insensitive pattern and its
// replacement.
type fragment struct {
	re  *regexp.Regexp
	new string
}

// rule applies its edits to statements its when pattern matches.
type rule struct {
	when  *regexp.Regexp
	edits []fragment
}

// ws compiles literal SQL text into a pattern in which every run of
// whitespace matches any run of whitespace.
func ws(literal string) *regexp.Regexp {
	return regexp.MustCompile(strings.Join(strings.Fields(regexp.QuoteMeta(literal)), `\s+`))
}

func edit(old, new string) fragment { return fragment{ws(old), new} }

func single(old, new string) rule { return rule{when: ws(old), edits: []fragment{edit(old, new)}} }

// fragmentRules are the rewrites inside a statement.
func fragmentRules() []rule {
	rulesOnce.Do(func() {
		theRules = []rule{
			// SQLAlchemy 1.4 get_indexes: indkey and indoption are int2vector
			// in PostgreSQL, whose text form is space-separated ("2 1"), and
			// SQLAlchemy splits it on spaces; here they are int2[].
			{when: ws(`ix.indkey::varchar`), edits: []fragment{
				edit(`ix.indkey::varchar`, `array_to_string(ix.indkey, ' ')`),
				edit(`ix.indoption::varchar`, `array_to_string(ix.indoption, ' ')`),
			}},
			// SQLAlchemy 1.4 get_columns: identity options. The same JSON
			// object, built as text (json_build_object is not provided), of
			// the sequence pg_depend says the identity column owns (the
			// query's pg_get_serial_sequence(...)::regclass needs a
			// run-time text-to-regclass cast).
			single(`(SELECT json_build_object( 'always', a.attidentity = 'a', 'start', s.seqstart, 'increment', s.seqincrement, 'minvalue', s.seqmin, 'maxvalue', s.seqmax, 'cache', s.seqcache, 'cycle', s.seqcycle) FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_class c on s.seqrelid = c."oid" WHERE c.relkind = 'S' AND a.attidentity != '' AND s.seqrelid = pg_catalog.pg_get_serial_sequence( a.attrelid::regclass::text, a.attname )::regclass::oid )`,
				`(SELECT ('{"always": ' || (a.attidentity = 'a')::text || ', "start": ' || s.seqstart || ', "increment": ' || s.seqincrement || ', "minvalue": ' || s.seqmin || ', "maxvalue": ' || s.seqmax || ', "cache": ' || s.seqcache || ', "cycle": ' || s.seqcycle::text || '}')::json FROM pg_catalog.pg_sequence s JOIN pg_catalog.pg_depend d ON d.objid = s.seqrelid WHERE d.refobjid = a.attrelid AND d.refobjsubid = a.attnum AND d.deptype = 'i' AND a.attidentity != '')`),
		}
	})
	return theRules
}

var (
	rulesOnce sync.Once
	theRules  []rule
)

//lint:immutable a compiled constant pattern.
var regclassLiteral = regexp.MustCompile(`'([A-Za-z_][A-Za-z0-9_."]*)'::(?:pg_catalog\.)?regclass`)

// resolveRegclass maps a regclass literal ("t", "public.t", "pg_class",
// `"T"`) to its pg_class oid.
func resolveRegclass(lit string, cat catalog.Catalog) (int64, bool) {
	var parts []string
	for _, p := range strings.Split(lit, ".") {
		if strings.HasPrefix(p, `"`) && strings.HasSuffix(p, `"`) && len(p) >= 2 {
			parts = append(parts, p[1:len(p)-1])
		} else {
			parts = append(parts, strings.ToLower(p))
		}
	}
	if cat != nil {
		if r, ok := cat.LookupRelation(parts); ok {
			return RelationOID(r.ID), true
		}
	}
	if r, ok := Lookup(parts); ok {
		return RelationOID(r.ID), true
	}
	return 0, false
}
