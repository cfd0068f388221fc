package expr

import (
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// SRFRowsMax bounds the rows one set-returning function call may return;
// a larger result is refused instead of exhausting memory.
const SRFRowsMax = 10_000_000

// SetReturning is a set-returning function (generate_series, unnest,
// jsonb_each, ...) with its argument and result types resolved: Rows gives
// the rows one call returns for evaluated arguments, in PostgreSQL's order.
type SetReturning struct {
	// Name is the function's name; "" for a scalar function in FROM,
	// which returns one row holding its single argument.
	Name     string
	ArgTypes []types.Type
	// Cols are the result columns' types (without the ordinality column).
	Cols []types.Type
	// Ordinality appends the 1-based row number as a bigint column.
	Ordinality bool
}

// Width is the number of columns a row of the result has.
func (s *SetReturning) Width() int {
	if s.Ordinality {
		return len(s.Cols) + 1
	}
	return len(s.Cols)
}

// Rows calls the function (PostgreSQL's semantics: a NULL argument of a
// strict function gives no rows).
func (s *SetReturning) Rows(env *Env, args []types.Datum) ([]types.Row, error) {
	rows, err := s.rows(env, args)
	if err != nil {
		return nil, err
	}
	if len(rows) > SRFRowsMax {
		return nil, tooManyRows(s.Name)
	}
	if s.Ordinality {
		for i, r := range rows {
			rows[i] = append(r[:len(r):len(r)], int64(i+1))
		}
	}
	return rows, nil
}

func tooManyRows(name string) error {
	return errcode.New(errcode.SQLFeatureNotSupported, "%s returns more than %d rows, the limit of a set-returning function", name, SRFRowsMax).
		WithDetail("construct: set-returning functions")
}

func (s *SetReturning) rows(env *Env, args []types.Datum) ([]types.Row, error) {
	arrayArg := func(i int) []types.Datum {
		if args[i] == nil {
			return nil
		}
		return args[i].(types.Array).Values
	}
	switch s.Name {
	case "":
		return []types.Row{{args[0]}}, nil
	case "generate_series":
		return s.generateSeries(env, args)
	case "unnest":
		n := 0
		for i := range args {
			n = max(n, len(arrayArg(i)))
		}
		rows := make([]types.Row, n)
		for r := range rows {
			rows[r] = make(types.Row, len(args))
			for i := range args {
				if vals := arrayArg(i); r < len(vals) {
					rows[r][i] = vals[r]
				}
			}
		}
		return rows, nil
	case "generate_subscripts":
		vals := arrayArg(0)
		if args[1] == nil || args[1].(int64) != 1 || len(vals) == 0 {
			return nil, nil
		}
		rev := len(args) == 3 && args[2] != nil && args[2].(bool)
		rows := make([]types.Row, len(vals))
		for i := range vals {
			k := int64(i + 1)
			if rev {
				k = int64(len(vals) - i)
			}
			rows[i] = types.Row{k}
		}
		return rows, nil
	case "information_schema._pg_expandarray":
		vals := arrayArg(0)
		rows := make([]types.Row, len(vals))
		for i, v := range vals {
			rows[i] = types.Row{v, int64(i + 1)}
		}
		return rows, nil
	case "jsonb_array_elements", "jsonb_array_elements_text":
		if args[0] == nil {
			return nil, nil
		}
		v, err := jsonbValue(args[0])
		if err != nil {
			return nil, err
		}
		switch v.Kind {
		case types.JSONArray:
		case types.JSONObject:
			return nil, EvalError(StateInvalidParameterValue, "cannot extract elements from an object")
		default:
			return nil, EvalError(StateInvalidParameterValue, "cannot extract elements from a scalar")
		}
		asText := s.Name == "jsonb_array_elements_text"
		rows := make([]types.Row, len(v.Elems))
		for i, e := range v.Elems {
			rows[i] = types.Row{jsonbResult(e, asText)}
		}
		return rows, nil
	case "jsonb_each", "jsonb_each_text", "jsonb_object_keys":
		if args[0] == nil {
			return nil, nil
		}
		v, err := jsonbValue(args[0])
		if err != nil {
			return nil, err
		}
		if v.Kind != types.JSONObject {
			what := "a scalar"
			if v.Kind == types.JSONArray {
				what = "an array"
			}
			if s.Name == "jsonb_object_keys" {
				return nil, EvalError(StateInvalidParameterValue, "cannot call jsonb_object_keys on %s", what)
			}
			return nil, EvalError(StateInvalidParameterValue, "cannot call %s on a non-object", s.Name)
		}
		rows := make([]types.Row, len(v.Keys))
		for i, k := range v.Keys {
			if s.Name == "jsonb_object_keys" {
				rows[i] = types.Row{k}
				continue
			}
			rows[i] = types.Row{k, jsonbResult(v.Vals[i], s.Name == "jsonb_each_text")}
		}
		return rows, nil
	}
	return nil, errcode.New(errcode.InternalError, "unknown set-returning function %q", s.Name)
}

// generateSeries steps from start to stop (inclusive) by step, in the
// series' own arithmetic (integer, numeric or timestamp + interval).
func (s *SetReturning) generateSeries(env *Env, args []types.Datum) ([]types.Row, error) {
	for _, a := range args {
		if a == nil {
			return nil, nil
		}
	}
	t := s.Cols[0]
	stepType := t
	if len(s.ArgTypes) == 3 {
		stepType = s.ArgTypes[2]
	}
	var step types.Datum
	if len(args) == 3 {
		step = args[2]
	} else {
		one, err := types.Parse(t, "1", nil)
		if err != nil {
			return nil, err
		}
		step = one
	}
	zero, err := types.Parse(stepType, "0", nil)
	if err != nil {
		return nil, err
	}
	sign := types.Compare(stepType, step, zero)
	if sign == 0 {
		return nil, EvalError(StateInvalidParameterValue, "step size cannot equal zero")
	}
	add, err := NewBinary("+", &ColumnRef{Index: 0, Typ: t}, &ColumnRef{Index: 1, Typ: stepType})
	if err != nil {
		return nil, err
	}
	cur, stop := args[0], args[1]
	var rows []types.Row
	for {
		c := types.Compare(t, cur, stop)
		if (sign > 0 && c > 0) || (sign < 0 && c < 0) {
			return rows, nil
		}
		if len(rows) >= SRFRowsMax {
			return nil, tooManyRows(s.Name)
		}
		rows = append(rows, types.Row{cur})
		if cur, err = add.Eval(env, types.Row{cur, step}); err != nil {
			// Overflow past the type's range ends the series, as in
			// PostgreSQL.
			if e, ok := errcode.As(err); ok && e.State() == "22003" {
				return rows, nil
			}
			return nil, err
		}
	}
}
