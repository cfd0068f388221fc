//go:build plantbug_aggretraction

package op

// sumWeight with the planted bug: a retraction (negative weight) is not
// subtracted from SUM/AVG accumulators, while the group's counts still
// drop. sim/system's view-versus-reference checker must catch it:
//
//	go test -tags plantbug_aggretraction -run '^TestPlantedAggRetractionCaught$' ./sim/system
func sumWeight(w int64) int64 { return max(w, 0) }
