package register

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// registerInput is one operation's input for the porcupine model.
type registerInput struct {
	Write bool
	Value int
}

// History is the client-observed history of a run: what porcupine checks.
type History struct {
	ops []porcupine.Operation
	// completedAt is the true time each completed operation returned, for
	// the liveness check.
	completedAt []int64
}

// startWrite records a write when it starts: until finishWrite its outcome
// is unknown, so it may take effect at any time after its call (it never
// returns). A write cut off by a deadline or by the end of the run stays so.
func (h *History) startWrite(client, value int, call int64) int {
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: registerInput{Write: true, Value: value}, Call: call, Return: math.MaxInt64})
	return len(h.ops) - 1
}

func (h *History) finishWrite(index int, ret int64) {
	h.ops[index].Return = ret
	h.completedAt = append(h.completedAt, ret)
}

func (h *History) read(client, value int, call, ret int64) {
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: registerInput{}, Output: value, Call: call, Return: ret})
	h.completedAt = append(h.completedAt, ret)
}

// Len is the number of recorded operations.
func (h *History) Len() int { return len(h.ops) }

// CompletedSince counts operations that returned after t.
func (h *History) CompletedSince(t int64) int {
	n := 0
	for _, at := range h.completedAt {
		if at > t {
			n++
		}
	}
	return n
}

// registerModel is a single register holding an int, initially 0.
func registerModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return 0 },
		Step: func(state, input, output any) (bool, any) {
			in := input.(registerInput)
			if in.Write {
				return true, in.Value
			}
			return output.(int) == state.(int), state
		},
		DescribeOperation: func(input, output any) string {
			in := input.(registerInput)
			if in.Write {
				return fmt.Sprintf("write(%d)", in.Value)
			}
			return fmt.Sprintf("read() -> %d", output)
		},
	}
}

// checkTimeout bounds porcupine's search; histories here are small, so
// hitting it means something is wrong with the workload's size.
const checkTimeout = 10 * time.Second

// Check verifies the history is linearizable.
func (h *History) Check() error {
	switch porcupine.CheckOperationsTimeout(registerModel(), h.ops, checkTimeout) {
	case porcupine.Ok:
		return nil
	case porcupine.Illegal:
		return fmt.Errorf("history of %d operations is not linearizable", len(h.ops))
	default:
		return fmt.Errorf("linearizability check timed out after %v on %d operations", checkTimeout, len(h.ops))
	}
}

// String is the operation log, one operation per line in call order, kept
// with a failing seed (STYLE.md 8).
func (h *History) String() string {
	var b strings.Builder
	for _, op := range h.ops {
		in := op.Input.(registerInput)
		ret := fmt.Sprint(op.Return)
		if op.Return == math.MaxInt64 {
			ret = "?"
		}
		if in.Write {
			fmt.Fprintf(&b, "client %d [%d, %s] write(%d)\n", op.ClientId, op.Call, ret, in.Value)
		} else {
			fmt.Fprintf(&b, "client %d [%d, %s] read() -> %v\n", op.ClientId, op.Call, ret, op.Output)
		}
	}
	return b.String()
}
