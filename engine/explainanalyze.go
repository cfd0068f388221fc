package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/ivm/circuit"
	"github.com/rockstream/rockstream/ivm/partition"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// explainAnalyze is EXPLAIN ANALYZE INCREMENTAL view: the operators of
// the circuit maintaining the view on its shard, as a tree from the view's
// output down to its inputs, each with its rows in and out and steps since
// the server started (or the view was last rebuilt), the time spent in it,
// and its stored state (kept across restarts).
//
// A view spread over the shards (shard.IsSpread) shows its parts added up:
// the same circuit runs on each, on its share of the rows.
func (s *session) explainAnalyze(ctx context.Context, snap *control.Snapshot, rel *catalog.Relation) (string, error) {
	homes := []partition.ShardID{s.e.router.HomeOf(snap, rel.ID)}
	if s.e.router.ReadHomeOf(snap, rel.ID) == shard.SpreadShards {
		homes = shard.SpreadShardsOf(s.e.router.Map())
	}
	var lines []shard.ViewStatus
	var frontier uint64
	names := make([]string, len(homes))
	for i, home := range homes {
		m, err := s.e.ask(ctx, s.e.router.ActorOf(home), shard.GetStatus{})
		if err != nil {
			return "", err
		}
		st := m.(shard.Status)
		if i == 0 || st.Frontier < frontier {
			frontier = st.Frontier
		}
		names[i] = fmt.Sprint(st.Shard)
		for _, v := range st.Views {
			if v.View == rel.ID {
				lines = mergeViewStatus(lines, []shard.ViewStatus{v})
			}
		}
	}
	where := "shard " + names[0]
	if len(names) > 1 {
		where = "shards " + strings.Join(names, ", ")
	}
	for _, v := range lines {
		var b strings.Builder
		fmt.Fprintf(&b, "VIEW  %s  (%s, frontier epoch %d", rel.Name, where, frontier)
		switch {
		case v.Failed != "":
			fmt.Fprintf(&b, "; failed: %s)\n", v.Failed)
		case v.Backfill != "":
			fmt.Fprintf(&b, "; backfilling: %s, %d input rows read)\n", v.Backfill, v.BackfillRowsRead)
		default:
			fmt.Fprintf(&b, "; %d rows, state %d rows, %d bytes)\n", v.Rows, v.StateRows, v.StateBytes)
		}
		renderOperators(&b, v.Nodes, sourceNames(snap))
		fmt.Fprintf(&b, "Counts are since the server started or the view was last rebuilt (backfill included), and over the last %d steps once there were more; state is as stored.\n", circuit.RecentStepsMax)
		return b.String(), nil
	}
	return "", fmt.Errorf("view %s has no status on %s", rel.Name, where)
}

// sourceNames maps the circuit label of each relation's source ("source
// 7") to the relation's name.
func sourceNames(snap *control.Snapshot) map[string]string {
	out := map[string]string{}
	for _, r := range snap.Relations() {
		out[fmt.Sprintf("source %d", shard.SourceID(r.ID))] = r.Name
		if r.Stages {
			// The lower stages its upper stage reads (actors/shard
			// stages.go); a plan has a few.
			for i := range 16 {
				out[fmt.Sprintf("source %d", shard.SourceID(catalog.StageID(r.ID, i)))] = fmt.Sprintf("%s$stage%d (lower stage %d, from every shard)", r.Name, i, i)
			}
		}
	}
	return out
}

// renderOperators draws nodes as trees from each output (a node no other
// reads) to the sources; a node read twice is drawn once and referred to
// by its number after that.
func renderOperators(b *strings.Builder, nodes []circuit.NodeStats, sources map[string]string) {
	read := make([]bool, len(nodes))
	for _, n := range nodes {
		for _, in := range n.Inputs {
			read[in] = true
		}
	}
	drawn := make([]bool, len(nodes))
	var draw func(i int, prefix string, last bool)
	draw = func(i int, prefix string, last bool) {
		branch, childPrefix := "├─ ", prefix+"│   "
		if last {
			branch, childPrefix = "└─ ", prefix+"    "
		}
		n := nodes[i]
		label := n.Label
		if name, ok := sources[label]; ok {
			label = "source " + name
		}
		if drawn[i] {
			fmt.Fprintf(b, "%s%s#%d %s  (shown above)\n", prefix, branch, i+1, label)
			return
		}
		drawn[i] = true
		fmt.Fprintf(b, "%s%s#%d %s  rows in %d  out %d  steps %d", prefix, branch, i+1, label, n.RowsIn, n.RowsOut, n.Steps)
		if n.Fused {
			b.WriteString("  time in its consumer (fused)")
		} else {
			fmt.Fprintf(b, "  time %s", formatMillis(time.Duration(n.StepNanos)))
		}
		if n.StateRows != 0 || n.StateBytes != 0 {
			fmt.Fprintf(b, "  state %d rows %d bytes", n.StateRows, n.StateBytes)
		}
		if r := n.Recent; n.Steps > r.Steps {
			// NB: only when it differs from the lifetime counts.
			fmt.Fprintf(b, "  (last %d steps: rows in %d  out %d", r.Steps, r.RowsIn, r.RowsOut)
			if !n.Fused {
				fmt.Fprintf(b, "  time %s", formatMillis(time.Duration(r.StepNanos)))
			}
			b.WriteString(")")
		}
		b.WriteString("\n")
		for k, in := range n.Inputs {
			draw(in, childPrefix, k == len(n.Inputs)-1)
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if !read[i] {
			draw(i, " ", true)
		}
	}
}

// formatMillis shows d in milliseconds with three decimals.
func formatMillis(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}
