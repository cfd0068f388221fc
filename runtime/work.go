package runtime

// Work is CPU work an actor reports while it handles a message, for the
// simulator's cost model (sim.CPUModel): each unit is charged a modelled
// CPU time on one of its process's cores, so that a simulated cluster
// shows how throughput grows with shards and cores. The real runtime
// ignores the reports: its CPU time is real.
//
//	shard.commit: Report(ctx, WorkCommitRow, len(m.Writes))
//	sim: the shard's core is busy CPUModel.PerUnit[WorkCommitRow] × n
//	     longer, and the shard's later effects (sends, replies) are late
//	     by as much
type Work uint8

const (
	// WorkIngestRow is a row a client sent (a COPY or INSERT row, decoded
	// before it reaches a commit).
	WorkIngestRow Work = iota
	// WorkCommitRow is a table row a commit writes.
	WorkCommitRow
	// WorkLogRow is a row of the delta log an epoch step or an exchange
	// frame decodes.
	WorkLogRow
	// WorkStepRow is an input row of a view circuit in an epoch step or a
	// backfill chunk.
	WorkStepRow
	// WorkReadRow is a row a read returns.
	WorkReadRow
	// WorkKinds is the number of kinds.
	WorkKinds
)

var workNames = [WorkKinds]string{"ingest_row", "commit_row", "log_row", "step_row", "read_row"}

func (w Work) String() string {
	if w < WorkKinds {
		return workNames[w]
	}
	return "work?"
}

// WorkReporter is implemented by the contexts of runtimes that model CPU
// time (the simulator with a CPU model).
type WorkReporter interface {
	ReportWork(w Work, n int)
}

// Report tells ctx's runtime that the current Receive did n units of work
// w (a no-op unless the runtime models CPU time).
func Report(ctx Context, w Work, n int) {
	if r, ok := ctx.(WorkReporter); ok && n > 0 {
		r.ReportWork(w, n)
	}
}
