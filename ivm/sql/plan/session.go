package plan

import (
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/ivm/types"
)

// Session assigns each input row to its session window (the FROM function
// SESSION(rel, time, key…, gap)): per Keys value, rows ordered by the Time
// column belong to one session while each is less than Gap after the
// previous one. Its output is the input row followed by Cols,
// window_start (the session's first time) and window_end (its last time
// plus Gap), of the time column's type. Rows whose time is NULL or
// infinite belong to no session.
type Session struct {
	Input Node
	Time  int
	Keys  []int
	// Gap is the gap in microseconds (a constant interval of hours,
	// minutes and seconds).
	Gap  int64
	Cols []Column
}

func (s *Session) Schema() []Column {
	return append(append([]Column(nil), s.Input.Schema()...), s.Cols...)
}
func (s *Session) Inputs() []Node { return []Node{s.Input} }
func (s *Session) WithInputs(in []Node) Node {
	x := *s
	x.Input = in[0]
	return &x
}
func (s *Session) Describe() string {
	in := s.Input.Schema()
	keys := make([]string, len(s.Keys))
	for i, k := range s.Keys {
		keys[i] = in[k].Name
	}
	return fmt.Sprintf("Session time=%s key=[%s] gap=%s", in[s.Time].Name, strings.Join(keys, ", "),
		types.Format(types.TInterval, types.Interval{Micros: s.Gap}))
}
