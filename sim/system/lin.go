package system

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/rockstream/rockstream/ivm/types"
)

// Checker (a): per-primary-key linearizability with porcupine. Every row
// of t1 and t2 is a register (its row, or "" when absent). A commit is a
// write of each row it changes, from its issue to its acknowledgement (an
// unacknowledged commit never returns, so it may take effect at any later
// point or, being last, never be seen). A read is a read of every row
// written by a commit issued before the read returned.
//
// The read's window starts at its issue for a linearizable read (MinEpoch
// is the highest epoch acknowledged when it was issued). A session read
// (MinEpoch is the session's own last acknowledged epoch:
// read-your-writes, possibly stale for other sessions) starts its window
// at the issue of that commit, since every commit acknowledged before then
// has a lower epoch and must be visible; a session read with no commit of
// its own starts at 0. A read at frontier F shows exactly the commits of
// epoch <= F, so it is linearizable in that window iff epochs agree with
// real time.

// linKey names one register: a table and a primary key.
type linKey struct {
	table int
	key   int64
}

type linInput struct {
	key   linKey
	write bool
	value string
	// cas: a compare-and-set from old to value (a transaction's change of
	// a row it looked up under the row's lock, txn.go). Its output is
	// true when the commit was acknowledged, nil when its outcome is
	// unknown (then it may also never have happened).
	cas bool
	old string
}

type history struct {
	ops []porcupine.Operation
}

// never is the return time of an operation whose outcome is unknown.
const never = math.MaxInt64

func rowValue(r types.Row) string {
	if r == nil {
		return ""
	}
	return fmt.Sprint(r)
}

// write records a commit's row write; it returns the op index.
func (h *history) write(client int, k linKey, row types.Row, call int64) int {
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: linInput{key: k, write: true, value: rowValue(row)}, Call: call, Return: never})
	return len(h.ops) - 1
}

func (h *history) finish(op int, ret int64) { h.ops[op].Return = ret }

// cas records a committed (ret) or unknown (ret == never) transaction's
// change of one row from old to row.
func (h *history) cas(client int, k linKey, old, row types.Row, call, ret int64) {
	var out any
	if ret != never {
		out = true
	}
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: linInput{key: k, cas: true, old: rowValue(old), value: rowValue(row)}, Output: out, Call: call, Return: ret})
}

func (h *history) read(client int, k linKey, row types.Row, call, ret int64) {
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: linInput{key: k}, Output: rowValue(row), Call: call, Return: ret})
}

func linModel() porcupine.Model {
	return porcupine.Model{
		Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
			byKey := map[linKey][]porcupine.Operation{}
			var keys []linKey
			for _, op := range history {
				k := op.Input.(linInput).key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			sort.Slice(keys, func(i, j int) bool {
				if keys[i].table != keys[j].table {
					return keys[i].table < keys[j].table
				}
				return keys[i].key < keys[j].key
			})
			out := make([][]porcupine.Operation, 0, len(keys))
			for _, k := range keys {
				out = append(out, byKey[k])
			}
			return out
		},
		Init: func() any { return "" },
		Step: func(st, input, output any) (bool, any) {
			in := input.(linInput)
			switch {
			case in.cas && st.(string) == in.old:
				return true, in.value
			case in.cas:
				// Only an unknown change may have failed its compare.
				return output == nil, st
			case in.write:
				return true, in.value
			}
			return output.(string) == st.(string), st
		},
		DescribeOperation: func(input, output any) string {
			in := input.(linInput)
			if in.cas {
				return fmt.Sprintf("t%d[%d] %q -> %q (%v)", in.key.table, in.key.key, in.old, in.value, output)
			}
			if in.write {
				return fmt.Sprintf("t%d[%d] := %q", in.key.table, in.key.key, in.value)
			}
			return fmt.Sprintf("t%d[%d] -> %q", in.key.table, in.key.key, output)
		},
	}
}

// linCheckTimeout bounds porcupine's search; per-key histories here are
// small, so hitting it means the workload grew too large.
const linCheckTimeout = 20 * time.Second

// check runs porcupine over the whole history.
func (h *history) check() error {
	switch porcupine.CheckOperationsTimeout(linModel(), h.ops, linCheckTimeout) {
	case porcupine.Ok:
		return nil
	case porcupine.Illegal:
		_, info := porcupine.CheckOperationsVerbose(linModel(), h.ops, linCheckTimeout)
		return fmt.Errorf("%w: per-key history of %d operations is not linearizable:\n%s", errChecker, len(h.ops), h.explain(info))
	default:
		return fmt.Errorf("linearizability check timed out after %v on %d operations", linCheckTimeout, len(h.ops))
	}
}

// explain prints the operations of the keys porcupine could not
// linearize (the partitions with a partial linearization that does not
// cover them).
func (h *history) explain(info porcupine.LinearizationInfo) string {
	var b strings.Builder
	parts := linModel().Partition(h.ops)
	partials := info.PartialLinearizations()
	for i, part := range parts {
		if i < len(partials) {
			longest := 0
			for _, p := range partials[i] {
				longest = max(longest, len(p))
			}
			if longest == len(part) {
				continue
			}
		}
		for _, op := range part {
			in := op.Input.(linInput)
			ret := fmt.Sprint(op.Return)
			if op.Return == never {
				ret = "?"
			}
			if in.cas {
				fmt.Fprintf(&b, "  client %d [%d, %s] t%d[%d] %q -> %q\n", op.ClientId, op.Call, ret, in.key.table, in.key.key, in.old, in.value)
			} else if in.write {
				fmt.Fprintf(&b, "  client %d [%d, %s] t%d[%d] := %q\n", op.ClientId, op.Call, ret, in.key.table, in.key.key, in.value)
			} else {
				fmt.Fprintf(&b, "  client %d [%d, %s] t%d[%d] -> %q\n", op.ClientId, op.Call, ret, in.key.table, in.key.key, op.Output)
			}
		}
		break
	}
	return b.String()
}
