//go:build !plantbug_aggretraction

package op

// sumWeight is the weight a SUM/AVG accumulator applies for an input of
// weight w. The plantbug_aggretraction build tag plants a bug here for
// the whole-system simulation to catch (sim/system).
func sumWeight(w int64) int64 { return w }
