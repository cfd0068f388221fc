package expr

import "github.com/rockstream/rockstream/ivm/types"

// registerNotify adds pg_notify(channel text, payload text) → void: the
// function form of NOTIFY. Not strict, as in PostgreSQL: a NULL channel is
// an error, a NULL payload an empty one. The session (Env.Notify) checks
// the arguments and queues the notification for its transaction's commit.
func registerNotify(add adder) {
	text := types.TText
	add(&Func{Name: "pg_notify", Args: []types.Type{text, text}, Result: types.Type{Kind: types.KindVoid, Typmod: -1}, Volatility: Volatile,
		Eval: func(env *Env, _ []types.Type, a []types.Datum) (types.Datum, error) {
			if env == nil || env.Notify == nil {
				return nil, EvalError("0A000", "pg_notify is not available here")
			}
			channel, _ := a[0].(string)
			payload, _ := a[1].(string)
			if err := env.Notify(channel, payload); err != nil {
				return nil, err
			}
			return "", nil
		}})
}
