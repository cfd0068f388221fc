package nexmark

// FelderaPerCore is Feldera's published Nexmark throughput per core, in
// events/s: the "16-core Nexmark Streaming Performance" table of
// https://github.com/feldera/feldera/blob/1eb7bb0a1/benchmark/README.md
// (2024-04-18: 100M events on 16 cores, hand-written Rust DBSP circuits,
// state in memory), each query's events/s divided by 16. The table has no
// q10 or q11 row.
var FelderaPerCore = map[string]float64{ //lint:immutable published figures
	"q0": 435_874, "q1": 412_242, "q2": 421_784, "q3": 413_005, "q4": 264_595,
	"q5": 411_862, "q6": 249_870, "q7": 196_048, "q8": 415_117, "q9": 56_918,
	"q12": 417_641, "q13": 229_703, "q14": 428_669, "q15": 221_208, "q16": 50_669,
	"q17": 241_892, "q18": 84_888, "q19": 75_076, "q20": 84_512, "q21": 414_676,
	"q22": 394_098,
}

// EventsPerCPUSecond is r's events per second of the process's CPU time
// less the event generator's (the server plus the pgx client sending COPY
// data): on a shared machine it moves far less than the wall-clock figure.
// Zero when no CPU time was measured.
func (r Result) EventsPerCPUSecond() float64 {
	if c := r.CPUSeconds - r.DriverCPUSeconds; c > 0 {
		return float64(r.Events) / c
	}
	return 0
}

// FelderaRatio is EventsPerCPUSecond over Feldera's published per-core
// figure for the query (FelderaPerCore), or 0 when there is none.
func (r Result) FelderaRatio() float64 {
	if f := FelderaPerCore[r.Query]; f > 0 {
		return r.EventsPerCPUSecond() / f
	}
	return 0
}
