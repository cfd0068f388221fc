package sql

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/bind"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/incr"
	"github.com/rockstream/rockstream/ivm/sql/opt"
	"github.com/rockstream/rockstream/ivm/sql/parse"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/types"
)

// View is a compiled materialized-view definition: an optimized PlanIR
// tree the engine can maintain incrementally (every construct in it is
// supported; anything else failed with RS-2001 naming the construct).
type View struct {
	Name string
	SQL  string
	// Plan computes the view's rows; ORDER BY ... LIMIT became a TopK, a
	// bare ORDER BY was dropped (a view is a set).
	Plan    plan.Node
	Columns []plan.Column
	// RetainHistory is the WITH (retain_history = ...) option (see
	// catalog.Relation.RetainHistory); 0 when not given.
	RetainHistory time.Duration
	// FreshnessTarget is the WITH (freshness_target = ...) option (see
	// catalog.Relation.FreshnessTarget); 0 when not given.
	FreshnessTarget time.Duration
	// TimeZone, ExtraFloatDigits, DateStyle and IntervalStyle are the
	// WITH (timezone = ..., extra_float_digits = ..., datestyle = ...,
	// intervalstyle = ...) options: the settings the view is maintained
	// with instead of the creating session's; "" when not given.
	TimeZone, ExtraFloatDigits, DateStyle, IntervalStyle string
	// WindowsNeverClose is WITH (windows = 'never_close'): the view
	// accepts streaming windows no watermark closes (OpenWindows).
	WindowsNeverClose bool
	// OpenWindows are the view's streaming window functions (TUMBLE,
	// HOP, SESSION) whose windows no watermark closes; CREATE refuses
	// them without WindowsNeverClose (checkWindows).
	OpenWindows []OpenWindow
}

// ViewOptionValues are a materialized view's WITH (...) options; an
// option not given is 0.
type ViewOptionValues struct {
	RetainHistory    time.Duration
	FreshnessTarget  time.Duration
	TimeZone         string
	ExtraFloatDigits string
	// WindowsNeverClose is windows = 'never_close'.
	WindowsNeverClose bool
	// DateStyle is the full setting ("SQL, DMY"): what a value leaves out
	// is the default's (ISO, MDY).
	DateStyle     string
	IntervalStyle string
}

// ViewOptions checks the options of ALTER MATERIALIZED VIEW ... SET
// (...) as CREATE's WITH (...) are checked, and returns their values.
func ViewOptions(opts map[string]string) (ViewOptionValues, error) { return viewOptions(opts) }

// viewOptions checks a materialized view's WITH (...) options:
// retain_history, freshness_target, timezone, extra_float_digits,
// datestyle and intervalstyle (the session settings it is maintained
// with, which pg_class.reloptions shows) and windows (checkWindows); a
// misspelt option must fail rather
// than be ignored (PostgreSQL also refuses unknown storage parameters).
func viewOptions(opts map[string]string) (ViewOptionValues, error) {
	var out ViewOptionValues
	keys := make([]string, 0, len(opts))
	for k := range opts { //lint:maprange the keys are sorted before use
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := opts[k]
		switch k {
		case "retain_history":
			d, err := catalog.ParseRetainHistory(v)
			if err != nil {
				return ViewOptionValues{}, err
			}
			out.RetainHistory = d
		case "freshness_target":
			d, err := catalog.ParseFreshnessTarget(v)
			if err != nil {
				return ViewOptionValues{}, err
			}
			out.FreshnessTarget = d
		case "timezone":
			if _, err := types.LoadZone(strings.TrimSpace(v)); err != nil || strings.TrimSpace(v) == "" {
				return ViewOptionValues{}, errcode.New(errcode.SQLInvalidParameterValue, "invalid value for parameter \"timezone\": \"%s\"", v).WithSQLState("22023")
			}
			out.TimeZone = strings.TrimSpace(v)
		case "extra_float_digits":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < -15 || n > 3 {
				return ViewOptionValues{}, errcode.New(errcode.SQLInvalidParameterValue, "invalid value for parameter \"extra_float_digits\": \"%s\"", v).
					WithSQLState("22023").WithDetail("extra_float_digits is an integer from -15 to 3.")
			}
			out.ExtraFloatDigits = strconv.Itoa(n)
		case "windows":
			if strings.ToLower(strings.TrimSpace(v)) != WindowsNeverClose {
				return ViewOptionValues{}, errcode.New(errcode.SQLInvalidParameterValue, "invalid value for parameter \"windows\": \"%s\"", v).
					WithSQLState("22023").WithDetail("The one value is '%s': the view accepts TUMBLE, HOP and SESSION windows that no watermark closes, whose state grows with the input.", WindowsNeverClose)
			}
			out.WindowsNeverClose = true
		case "datestyle":
			style, order, err := types.ParseDateStyle(v, types.DateStyleISO, types.DateOrderMDY)
			if err != nil {
				return ViewOptionValues{}, errcode.New(errcode.SQLInvalidParameterValue, "invalid value for parameter \"datestyle\": \"%s\"", v).
					WithSQLState("22023").WithDetail("%v DateStyle is an output style (ISO, SQL, Postgres, German) and/or a field order (MDY, DMY, YMD).", err)
			}
			out.DateStyle = types.DateStyleSetting(style, order)
		case "intervalstyle":
			st, err := types.ParseIntervalStyleSetting(v)
			if err != nil {
				return ViewOptionValues{}, errcode.New(errcode.SQLInvalidParameterValue, "invalid value for parameter \"intervalstyle\": \"%s\"", v).
					WithSQLState("22023").WithDetail("IntervalStyle is one of postgres, postgres_verbose, sql_standard, iso_8601.")
			}
			out.IntervalStyle = st.String()
		default:
			return ViewOptionValues{}, errcode.New(errcode.SQLInvalidParameterValue, "unrecognized parameter \"%s\"", k).WithSQLState("22023")
		}
	}
	return out, nil
}

// CompileView compiles a materialized view's defining query.
func CompileView(cat catalog.Catalog, query string) (*View, error) {
	return CompileViewWith(cat, query, CompileOptions{})
}

// CompileOptions are the options of CompileViewWith.
type CompileOptions struct {
	// InlineMaterialized: see bind.Options.InlineMaterialized.
	InlineMaterialized func(*catalog.Relation) (*catalog.Relation, bool)
}

// CompileViewWith compiles a materialized view's defining query with opts.
func CompileViewWith(cat catalog.Catalog, query string, opts CompileOptions) (*View, error) {
	st, err := parse.ParseOne(query)
	if err != nil {
		return nil, err
	}
	pg, ok := st.(*parse.PG)
	if !ok || pg.Stmt.GetSelectStmt() == nil {
		return nil, errcode.New(errcode.UnsupportedSQLConstruct, "a materialized view must be defined by a query")
	}
	return compileViewStmt(cat, pg, opts)
}

func compileViewStmt(cat catalog.Catalog, pg *parse.PG, opts CompileOptions) (*View, error) {
	q, err := bind.Query(cat, pg, bind.Options{ForView: true, InlineMaterialized: opts.InlineMaterialized})
	if err != nil {
		return nil, err
	}
	if len(q.ParamTypes) > 0 {
		return nil, errcode.New(errcode.UnsupportedSQLConstruct, "materialized views do not support parameters ($1)").WithDetail("construct: parameters")
	}
	if q.LimitParam != 0 || q.OffsetParam != 0 {
		return nil, errcode.New(errcode.UnsupportedSQLConstruct, "materialized views do not support parameters ($1)").WithDetail("construct: parameters")
	}
	node := q.Plan
	if q.Limit >= 0 || q.Offset > 0 {
		node = &plan.TopK{Input: node, Order: q.Order, Limit: q.Limit, Offset: q.Offset}
	}
	if len(node.Schema()) != len(q.Columns) {
		node = &plan.Project{Input: node, Exprs: plan.ColumnRefs(node.Schema())[:len(q.Columns)], Cols: q.Columns}
	}
	node = opt.Optimize(node)
	if node, err = temporalFilters(node); err != nil {
		return nil, err
	}
	if err := opt.CheckMaintainable(node); err != nil {
		return nil, err
	}
	if err := checkRecursion(node); err != nil {
		return nil, err
	}
	return &View{SQL: pg.SQL, Plan: node, Columns: append([]plan.Column(nil), q.Columns...), OpenWindows: openWindows(q)}, nil
}

// visibleOrder is the prefix of a bound query's ORDER BY on visible
// columns: a key on a hidden column (an expression not in the select
// list) cannot be evaluated over a view's stored rows (readOrder).
func visibleOrder(q *bind.BoundQuery) []plan.SortKey {
	var out []plan.SortKey
	for _, k := range q.Order {
		if k.Col >= len(q.Columns) {
			break
		}
		out = append(out, k)
	}
	return out
}

// checkRecursion refuses, at CREATE MATERIALIZED VIEW, every recursive
// CTE the fixpoint operator cannot maintain (incr.RecursionMode names the
// construct), rather than when the circuit is built.
func checkRecursion(n plan.Node) error {
	if ru, ok := n.(*plan.RecursiveUnion); ok {
		if _, err := incr.RecursionMode(ru); err != nil {
			return err
		}
	}
	for _, in := range n.Inputs() {
		if err := checkRecursion(in); err != nil {
			return err
		}
	}
	return nil
}
