package engine

import (
	"context"
	"math"
	"time"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/gateway"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/syscat"
)

// viewStatusColumns are SHOW VIEW STATUS's columns.
var viewStatusColumns = types.Schema{
	{Name: "name", Type: types.TText},
	{Name: "state", Type: types.TText},
	{Name: "frontier", Type: types.TInt8},
	{Name: "lag_epochs", Type: types.TInt8},
	{Name: "rows", Type: types.TInt8},
	{Name: "state_rows", Type: types.TInt8},
	{Name: "state_bytes", Type: types.TInt8},
	{Name: "error", Type: types.TText, Nullable: true},
	{Name: "freshness_target", Type: types.TInterval, Nullable: true},
	{Name: "freshness_lag", Type: types.TInterval, Nullable: true},
	{Name: "freshness_met", Type: types.TBool, Nullable: true},
	{Name: "freshness_reason", Type: types.TText, Nullable: true},
	// backfill_percent: how much of its inputs a view being filled has
	// fed, estimated (NULL once it runs).
	{Name: "backfill_percent", Type: types.TFloat4, Nullable: true},
}

func (s *session) showViewStatus(ctx context.Context, snap *control.Snapshot, st *rsql.ShowViewStatus) (gateway.Cursor, error) {
	status, err := s.e.Status(ctx)
	if err != nil {
		return nil, err
	}
	c := &rowsCursor{tag: ""}
	for _, v := range status.Views {
		if st.ShowViewStatus != nil && len(st.Name) > 0 && st.Name.Last() != v.Name {
			continue
		}
		var target time.Duration
		if rel, ok := snap.RelationByID(v.View); ok {
			target = rel.FreshnessTarget
		}
		c.rows = append(c.rows, viewStatusRow(status, v, target))
	}
	return c, nil
}

func viewStatusRow(st shard.Status, v shard.ViewStatus, freshnessTarget time.Duration) types.Row {
	state, errText := syscat.ViewState(viewStats(v))
	row := types.Row{v.Name, state, int64(v.Frontier), int64(st.LastEpoch - min(st.LastEpoch, v.Frontier)), v.Rows, v.StateRows, v.StateBytes, errText}
	row = append(row, freshnessOf(v, freshnessTarget).Columns()...)
	var pct types.Datum
	if v.Backfill != "" {
		pct = float64(float32(math.Round(v.BackfillPercent*10) / 10))
	}
	return append(row, pct)
}

// viewStats are a view's status line as the system relations show it.
func viewStats(v shard.ViewStatus) syscat.ViewStats {
	return syscat.ViewStats{Rows: v.Rows, StateRows: v.StateRows, StateBytes: v.StateBytes, Error: v.Error, Failed: v.Failed, Backfill: v.Backfill, BackfillRowsRead: v.BackfillRowsRead, BackfillPercent: v.BackfillPercent}
}
