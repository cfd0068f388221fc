package op

import (
	"fmt"
	"strings"
)

// State formats. Every stateful operator names the encoding of the state
// it stores (keys and values under its arrangements); a circuit's format
// record is built from them (circuit.StateFormat) and stored with a view's
// state, so a build whose encodings differ from the ones that wrote the
// state does not misread it: the view is rebuilt from its inputs instead
// (actors/shard).
//
// RULE: whoever changes how an operator encodes its state bumps that
// operator's version below in the same commit. Versions only grow.
//
//	operator             format                        changed when
//	Aggregate (generic)  aggregate/3                   output errors stored, float sums as floatSum (2),
//	                                                   numeric NaN/±Infinity counted, not added (3)
//	                                                   (var_*/stddev_* calls add their own slots
//	                                                   [sumX, sumX², n, scales]; no existing layout changed)
//	Aggregate (linear)   aggregate.words/3 [layout]    int8 SUM/AVG became words (2),
//	                                                   float sums became floatSum words (3),
//	                                                   numeric(p≤18,s) sums as words "n<s>." (new letter)
//	Join                 join/2                        entries are mergeable words
//	                                                   [weight, weight·match_count] (2)
//	Distinct, SetOp      counting/1
//	TopK                 topk/1
//	Window               window/1
//	Window over a TopK   window.topk/1                 stores nothing: reads the TopK's
//	                                                   state (Window.ReadInputFrom)
//	Integrate            integrate/1
//	Differentiate        differentiate/1
//	Delay                delay/1
//	Recursive            recursive/1[mode]{body}    (body: the step sub-circuit's record)
//	TemporalFilter       temporal/1
//	Session              session/1
//	Aggregate with a     the aggregate's format ++ "+close/1" (its close index,
//	watermark            agg_watermark.go)
//	Join with a          join/2+close/1 (join_watermark.go)
//	watermark

// StateFormat returns the name and version of the state encoding of o, or
// "" when o stores no state.
func StateFormat(o Operator) string {
	switch o := o.(type) {
	case *Aggregate:
		if o.closeIndex != nil {
			return o.stateFormat() + "+close/1"
		}
		return o.stateFormat()
	case *Join:
		if o.close != nil {
			return "join/2+close/1"
		}
		return "join/2"
	case *Distinct, *SetOp:
		return "counting/1"
	case *TopK:
		return "topk/1"
	case *Window:
		if o.input != nil {
			return "window.topk/1"
		}
		return "window/1"
	case *Integrate:
		return "integrate/1"
	case *Differentiate:
		return "differentiate/1"
	case *Delay:
		return "delay/1"
	case *Recursive:
		return o.stateFormat()
	case *TemporalFilter:
		return "temporal/1"
	case *Session:
		return "session/1"
	}
	if _, ok := o.(Stateful); ok {
		// INVARIANT: every stateful operator is listed above.
		panic(fmt.Sprintf("op: stateful operator %T has no state format", o))
	}
	return ""
}

// stateFormat is the Aggregate's state format: on the linear path the
// words layout (one letter per call kind) is part of it, since it decides
// what each stored word means.
func (a *Aggregate) stateFormat() string {
	if a.lin == nil {
		return "aggregate/3"
	}
	var b strings.Builder
	b.WriteString("aggregate.words/3[")
	for _, c := range a.lin.calls {
		b.WriteByte("cifb8n"[c.kind])
		if c.kind == linSumNumeric {
			fmt.Fprintf(&b, "%d.", c.scale)
		}
	}
	b.WriteByte(']')
	return b.String()
}
