package expr

import "github.com/rockstream/rockstream/ivm/types"

// SequenceRef names the sequence a sequence function acts on: by name
// (nextval('s')) or by regclass oid (nextval('s'::regclass) resolved by the
// session, or an oid).
type SequenceRef struct {
	Name string
	OID  int64
}

// Sequences answers the sequence functions (nextval, currval, setval,
// lastval). The engine sets Env.Sequences for ad-hoc statements; with
// none (views, tests) they fail: views reject them at DDL time as volatile.
type Sequences interface {
	NextVal(seq SequenceRef) (int64, error)
	CurrVal(seq SequenceRef) (int64, error)
	SetVal(seq SequenceRef, value int64, isCalled bool) (int64, error)
	LastVal() (int64, error)
	// SerialSequence is pg_get_serial_sequence(table, column): the
	// qualified name of the sequence the column owns; ok false for none.
	SerialSequence(table, column string) (name string, ok bool, err error)
}

func sequencesOf(env *Env) (Sequences, error) {
	if env == nil || env.Sequences == nil {
		return nil, EvalError("0A000", "sequence functions are not available here")
	}
	return env.Sequences, nil
}

func sequenceRef(t types.Type, d types.Datum) SequenceRef {
	if t.Kind.IsString() || t.Kind == types.KindUnknown {
		return SequenceRef{Name: d.(string)}
	}
	return SequenceRef{OID: d.(int64)}
}

func registerSequence(add adder) {
	text, regclass, i8, b := types.TText, types.Type{Kind: types.KindRegClass, Typmod: -1}, types.TInt8, types.TBool
	nextval := func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
		s, err := sequencesOf(env)
		if err != nil {
			return nil, err
		}
		return s.NextVal(sequenceRef(ts[0], a[0]))
	}
	currval := func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
		s, err := sequencesOf(env)
		if err != nil {
			return nil, err
		}
		return s.CurrVal(sequenceRef(ts[0], a[0]))
	}
	setval := func(env *Env, ts []types.Type, a []types.Datum) (types.Datum, error) {
		s, err := sequencesOf(env)
		if err != nil {
			return nil, err
		}
		called := true
		if len(a) == 3 {
			called = a[2].(bool)
		}
		return s.SetVal(sequenceRef(ts[0], a[0]), a[1].(int64), called)
	}
	for _, arg := range []types.Type{text, regclass} {
		add(&Func{Name: "nextval", Args: []types.Type{arg}, Result: i8, Strict: true, Volatility: Volatile, Eval: nextval},
			&Func{Name: "currval", Args: []types.Type{arg}, Result: i8, Strict: true, Volatility: Volatile, Eval: currval},
			&Func{Name: "setval", Args: []types.Type{arg, i8}, Result: i8, Strict: true, Volatility: Volatile, Eval: setval},
			&Func{Name: "setval", Args: []types.Type{arg, i8, b}, Result: i8, Strict: true, Volatility: Volatile, Eval: setval})
	}
	add(&Func{Name: "pg_get_serial_sequence", Args: []types.Type{text, text}, Result: text, Strict: true, Volatility: Stable,
		Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			if env == nil || env.Sequences == nil {
				return nil, nil
			}
			name, ok, err := env.Sequences.SerialSequence(a[0].(string), a[1].(string))
			if err != nil || !ok {
				return nil, err
			}
			return name, nil
		}})
	add(&Func{Name: "lastval", Result: i8, Volatility: Volatile, Eval: func(env *Env, _ []types.Type, _ []types.Datum) (types.Datum, error) {
		s, err := sequencesOf(env)
		if err != nil {
			return nil, err
		}
		return s.LastVal()
	}})
}
