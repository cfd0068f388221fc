package expr

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// CatalogInfo answers the system-catalog functions psql and drivers call
// (pg_get_indexdef, pg_get_userbyid, ...). The engine sets Env.Catalog for
// ad-hoc queries; with none (views, tests) those functions return NULL.
type CatalogInfo interface {
	// UserName is the role named by oid.
	UserName(oid int64) (string, bool)
	// IndexDef is pg_get_indexdef's CREATE INDEX statement of an index.
	IndexDef(oid int64) (string, bool)
	// ConstraintDef is pg_get_constraintdef's text of a constraint.
	ConstraintDef(oid int64) (string, bool)
	// ViewDef is a view's defining query, by oid.
	ViewDef(oid int64) (string, bool)
	// ViewDefByName is a view's defining query, by (possibly qualified) name.
	ViewDefByName(name string) (string, bool)
	// TableVisible reports whether a relation is visible in the search path.
	TableVisible(oid int64) bool
	// Database is current_database().
	Database() string
	// CurrentUser is current_user: the session's role (which need not be
	// the owner of the relations UserName(10) names).
	CurrentUser() string
	// Version is version().
	Version() string
}

func catalogOf(env *Env) CatalogInfo {
	if env == nil {
		return nil
	}
	return env.Catalog
}

// searchPath is the session's search_path (existing schemas), public when
// the environment has none.
func searchPath(env *Env) []string {
	if env == nil || !env.HasSearchPath {
		return []string{"public"}
	}
	return env.SearchPath
}

// catalogText wraps a CatalogInfo lookup by oid as a strict, stable function
// body returning text or NULL.
func catalogText(lookup func(CatalogInfo, int64) (string, bool)) func(*Env, []types.Type, []types.Datum) (types.Datum, error) {
	return func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
		c := catalogOf(env)
		if c == nil {
			return nil, nil
		}
		if s, ok := lookup(c, a[0].(int64)); ok {
			return s, nil
		}
		return nil, nil
	}
}

func constant(v types.Datum) func(*Env, []types.Type, []types.Datum) (types.Datum, error) {
	return func(*Env, []types.Type, []types.Datum) (types.Datum, error) { return v, nil }
}

// FormatType is format_type(type_oid, typmod).
func FormatType(oid int64, typmod int64, hasTypmod bool) string {
	t, ok := types.FromOID(uint32(oid))
	if !ok {
		return "???"
	}
	if t.Kind == types.KindChar && (!hasTypmod || typmod < 0) {
		return "bpchar"
	}
	if hasTypmod {
		if t.Kind == types.KindArray && t.Elem != nil {
			e := *t.Elem
			e.Typmod = int32(typmod)
			return e.SQLName() + "[]"
		}
		t.Typmod = int32(typmod)
	}
	return t.SQLName()
}

// quoteIdent is PostgreSQL's quote_ident: quotes unless the identifier is
// lower-case letters, digits and underscores not starting with a digit.
func quoteIdent(s string) string {
	plain := s != ""
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9') {
			plain = false
		}
	}
	if plain {
		switch s {
		case "all", "and", "any", "array", "as", "asc", "case", "cast", "check", "collate", "column", "constraint", "create",
			"default", "desc", "distinct", "do", "else", "end", "except", "false", "for", "foreign", "from", "grant", "group",
			"having", "in", "into", "limit", "not", "null", "offset", "on", "only", "or", "order", "primary", "references",
			"select", "table", "then", "to", "true", "union", "unique", "user", "using", "when", "where", "with":
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// sizePretty is pg_size_pretty(bigint), with PostgreSQL 15's limits and
// half-rounding.
func sizePretty(n int64) string {
	const limit, limit2 = 10 * 1024, 10*1024*2 - 1
	abs := func(v int64) int64 {
		if v < 0 {
			return -v
		}
		return v
	}
	half := func(v int64) int64 {
		if v < 0 {
			return (v - 1) / 2
		}
		return (v + 1) / 2
	}
	if abs(n) < limit {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	n >>= 9 // one extra bit for rounding
	for _, unit := range []string{"kB", "MB", "GB", "TB"} {
		if abs(n) < limit2 {
			return strconv.FormatInt(half(n), 10) + " " + unit
		}
		n >>= 10
	}
	return strconv.FormatInt(half(n), 10) + " PB"
}

func registerCatalog(add adder) {
	oidT, text, b, i4, i8, name := types.TOID, types.TText, types.TBool, types.TInt4, types.TInt8, types.TName
	visible := &Func{Name: "pg_table_is_visible", Args: []types.Type{oidT}, Result: b, Strict: true, Volatility: Stable,
		Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			if c := catalogOf(env); c != nil {
				return c.TableVisible(a[0].(int64)), nil
			}
			return true, nil
		}}
	add(visible)
	for _, n := range []string{"pg_type_is_visible", "pg_function_is_visible", "pg_collation_is_visible", "pg_opclass_is_visible",
		"pg_operator_is_visible", "pg_conversion_is_visible", "pg_statistics_obj_is_visible", "pg_ts_config_is_visible"} {
		add(&Func{Name: n, Args: []types.Type{oidT}, Result: b, Strict: true, Volatility: Stable, Eval: constant(true)})
	}
	add(&Func{Name: "pg_get_userbyid", Args: []types.Type{oidT}, Result: name, Strict: true, Volatility: Stable,
		Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			if c := catalogOf(env); c != nil {
				if s, ok := c.UserName(a[0].(int64)); ok {
					return s, nil
				}
			}
			return "unknown (OID=" + strconv.FormatInt(a[0].(int64), 10) + ")", nil
		}})
	add(&Func{Name: "format_type", Args: []types.Type{oidT, i4}, Result: text, Volatility: Stable,
		Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			if a[0] == nil {
				return nil, nil
			}
			tm, has := int64(-1), a[1] != nil
			if has {
				tm = a[1].(int64)
			}
			return FormatType(a[0].(int64), tm, has), nil
		}})
	// pg_node_tree values (pg_attrdef.adbin, ...) are stored as SQL text.
	getExpr := func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) { return a[0], nil }
	add(&Func{Name: "pg_get_expr", Args: []types.Type{text, oidT}, Result: text, Strict: true, Volatility: Stable, Eval: getExpr},
		&Func{Name: "pg_get_expr", Args: []types.Type{text, oidT, b}, Result: text, Strict: true, Volatility: Stable, Eval: getExpr})
	indexDef := catalogText(CatalogInfo.IndexDef)
	add(&Func{Name: "pg_get_indexdef", Args: []types.Type{oidT}, Result: text, Strict: true, Volatility: Stable, Eval: indexDef},
		&Func{Name: "pg_get_indexdef", Args: []types.Type{oidT, i4, b}, Result: text, Strict: true, Volatility: Stable,
			Eval: func(env *Env, at []types.Type, a []types.Datum) (types.Datum, error) {
				if a[1].(int64) != 0 {
					// One column of the index, cut from the definition's
					// column list.
					d, err := indexDef(env, at, a)
					if s, ok := d.(string); ok && err == nil {
						if i := strings.LastIndex(s, "("); i >= 0 {
							cols := strings.Split(strings.TrimSuffix(s[i+1:], ")"), ", ")
							if k := int(a[1].(int64)); k <= len(cols) {
								// Only the column, as PostgreSQL: no
								// operator class, DESC or NULLS.
								return indexColumnName(cols[k-1]), nil
							}
							return "", nil
						}
					}
					return d, err
				}
				return indexDef(env, at, a)
			}})
	conDef := catalogText(CatalogInfo.ConstraintDef)
	add(&Func{Name: "pg_get_constraintdef", Args: []types.Type{oidT}, Result: text, Strict: true, Volatility: Stable, Eval: conDef},
		&Func{Name: "pg_get_constraintdef", Args: []types.Type{oidT, b}, Result: text, Strict: true, Volatility: Stable, Eval: conDef})
	viewDef := catalogText(CatalogInfo.ViewDef)
	viewDefByName := func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
		if c := catalogOf(env); c != nil {
			if s, ok := c.ViewDefByName(a[0].(string)); ok {
				return s, nil
			}
		}
		return nil, nil
	}
	add(&Func{Name: "pg_get_viewdef", Args: []types.Type{oidT}, Result: text, Strict: true, Volatility: Stable, Eval: viewDef},
		&Func{Name: "pg_get_viewdef", Args: []types.Type{oidT, b}, Result: text, Strict: true, Volatility: Stable, Eval: viewDef},
		&Func{Name: "pg_get_viewdef", Args: []types.Type{oidT, i4}, Result: text, Strict: true, Volatility: Stable, Eval: viewDef},
		&Func{Name: "pg_get_viewdef", Args: []types.Type{text}, Result: text, Strict: true, Volatility: Stable, Eval: viewDefByName},
		&Func{Name: "pg_get_viewdef", Args: []types.Type{text, b}, Result: text, Strict: true, Volatility: Stable, Eval: viewDefByName})
	// RockStream keeps no comments: descriptions are NULL.
	null := constant(nil)
	add(&Func{Name: "col_description", Args: []types.Type{oidT, i4}, Result: text, Volatility: Stable, Eval: null},
		&Func{Name: "obj_description", Args: []types.Type{oidT, name}, Result: text, Volatility: Stable, Eval: null},
		&Func{Name: "obj_description", Args: []types.Type{oidT}, Result: text, Volatility: Stable, Eval: null},
		&Func{Name: "shobj_description", Args: []types.Type{oidT, name}, Result: text, Volatility: Stable, Eval: null})
	for _, n := range []string{"pg_get_function_result", "pg_get_function_arguments", "pg_get_function_identity_arguments",
		"pg_get_statisticsobjdef_columns", "pg_get_partkeydef", "pg_get_triggerdef", "pg_get_ruledef", "pg_tablespace_location"} {
		add(&Func{Name: n, Args: []types.Type{oidT}, Result: text, Volatility: Stable, Eval: null})
	}
	add(&Func{Name: "pg_relation_is_publishable", Args: []types.Type{oidT}, Result: b, Strict: true, Volatility: Stable, Eval: constant(false)},
		&Func{Name: "pg_is_in_recovery", Result: b, Volatility: Volatile, Eval: constant(false)},
		&Func{Name: "pg_encoding_to_char", Args: []types.Type{i4}, Result: name, Strict: true, Volatility: Stable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				switch a[0].(int64) {
				case 0:
					return "SQL_ASCII", nil
				case 6:
					return "UTF8", nil
				}
				return "", nil
			}},
		&Func{Name: "pg_char_to_encoding", Args: []types.Type{name}, Result: i4, Strict: true, Volatility: Stable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				switch strings.ToUpper(strings.ReplaceAll(a[0].(string), "-", "")) {
				case "SQL_ASCII":
					return int64(0), nil
				case "UTF8":
					return int64(6), nil
				}
				return int64(-1), nil
			}},
		&Func{Name: "current_database", Result: name, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
				if c := catalogOf(env); c != nil {
					return c.Database(), nil
				}
				return "default", nil
			}},
		&Func{Name: "version", Result: text, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
				if c := catalogOf(env); c != nil {
					return c.Version(), nil
				}
				return nil, nil
			}},
		&Func{Name: "current_schema", Result: name, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
				path := searchPath(env)
				if len(path) == 0 {
					return nil, nil
				}
				return path[0], nil
			}},
		&Func{Name: "current_user", Result: name, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
				if c := catalogOf(env); c != nil {
					return c.CurrentUser(), nil
				}
				return nil, nil
			}},
		&Func{Name: "current_schemas", Args: []types.Type{b}, Result: types.ArrayOf(name), Strict: true, Volatility: Stable,
			Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				path := searchPath(env)
				out := []types.Datum{}
				if a[0].(bool) && !slices.Contains(path, "pg_catalog") {
					out = append(out, "pg_catalog")
				}
				for _, s := range path {
					out = append(out, s)
				}
				return types.Array{Elem: name, Values: out}, nil
			}},
		&Func{Name: "quote_ident", Args: []types.Type{text}, Result: text, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				return quoteIdent(a[0].(string)), nil
			}},
		&Func{Name: "pg_size_pretty", Args: []types.Type{i8}, Result: text, Strict: true, Volatility: Immutable,
			Eval: func(_ *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
				return sizePretty(a[0].(int64)), nil
			}})
	arrayToString := func(env *Env, at []types.Type, a []types.Datum) (types.Datum, error) {
		if a[0] == nil || a[1] == nil {
			return nil, nil
		}
		arr := a[0].(types.Array)
		var null types.Datum
		if len(a) > 2 {
			null = a[2]
		}
		var parts []string
		for _, v := range arr.Values {
			switch {
			case v != nil:
				parts = append(parts, types.FormatStyle(arr.Elem, v, envStyle(env)))
			case null != nil:
				parts = append(parts, null.(string))
			}
		}
		return strings.Join(parts, a[1].(string)), nil
	}
	add(&Func{Name: "array_to_string", Args: []types.Type{anyArrayType, text}, Result: text, Volatility: Stable, Eval: arrayToString},
		&Func{Name: "array_to_string", Args: []types.Type{anyArrayType, text, text}, Result: text, Volatility: Stable, Eval: arrayToString})
	// Sizes: RockStream's state lives in the LSM, not in relation files.
	for _, n := range []string{"pg_relation_size", "pg_total_relation_size", "pg_table_size", "pg_indexes_size"} {
		add(&Func{Name: n, Args: []types.Type{oidT}, Result: i8, Strict: true, Volatility: Stable, Eval: constant(int64(0))})
	}
	add(&Func{Name: "pg_database_size", Args: []types.Type{anyType}, Result: i8, Strict: true, Volatility: Stable, Eval: constant(int64(0))})
	// The one role is a superuser: every privilege check passes.
	for _, n := range []string{"has_table_privilege", "has_schema_privilege", "has_database_privilege", "has_column_privilege",
		"has_function_privilege", "has_sequence_privilege", "has_any_column_privilege", "has_type_privilege",
		"has_tablespace_privilege", "has_foreign_data_wrapper_privilege", "has_server_privilege", "has_language_privilege",
		"pg_has_role"} {
		add(&Func{Name: n, Args: []types.Type{anyType, anyType}, Result: b, Strict: true, Volatility: Stable, Eval: constant(true)},
			&Func{Name: n, Args: []types.Type{anyType, anyType, anyType}, Result: b, Strict: true, Volatility: Stable, Eval: constant(true)},
			&Func{Name: n, Args: []types.Type{anyType, anyType, anyType, anyType}, Result: b, Strict: true, Volatility: Stable, Eval: constant(true)})
	}
}

// indexColumnName is one column of pg_get_indexdef's column list without
// what follows its name (an operator class, DESC, NULLS FIRST).
func indexColumnName(col string) string {
	quoted := false
	for i, c := range col {
		switch {
		case c == '"':
			quoted = !quoted
		case c == ' ' && !quoted:
			return col[:i]
		}
	}
	return col
}
