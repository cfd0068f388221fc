package engine

import (
	"context"

	sessionactor "github.com/rockstream/rockstream/actors/session"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/shard"
	rsql "github.com/rockstream/rockstream/ivm/sql"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/plan"
	"github.com/rockstream/rockstream/ivm/zset"
)

// readPlanned reads what plan n scans as reads (rsql.PlanReads) chose:
// first every table but those looked up, then each looked-up table at the
// join values of the rows read of its driving table (a lookup join), or
// whole when they are too many.
//
// The reads share one snapshot of the committed state (PinReads; a
// REPEATABLE READ transaction's own).
func (s *session) readPlanned(ctx context.Context, snap *control.Snapshot, n plan.Node, reads rsql.Reads) (map[catalog.ID]zset.Batch, error) {
	rels := scannedRelations(n)
	if len(reads.Lookups) == 0 {
		return s.readSnapshotKeys(ctx, snap, rels, reads.Points, shardRanges(reads.Ranges))
	}
	// The reads take several requests: they share one snapshot, as one
	// request's reads do (a commit between them would show in one only).
	if _, err := s.req(ctx, sessionactor.PinReads{CatalogVersion: snap.Version}); err != nil {
		return nil, err
	}
	defer func() { _, _ = s.req(ctx, sessionactor.UnpinReads{}) }()
	looked := map[catalog.ID]bool{}
	for _, l := range reads.Lookups {
		looked[l.Table.ID] = true
	}
	var first []*catalog.Relation
	for _, r := range rels {
		if !looked[r.ID] {
			first = append(first, r)
		}
	}
	out, err := s.readSnapshotKeys(ctx, snap, first, reads.Points, shardRanges(reads.Ranges))
	if err != nil {
		return nil, err
	}
	for _, l := range reads.Lookups {
		ranges, ok := l.Ranges(out[l.Driver.ID].Rows)
		var keyRanges map[catalog.ID][]shard.KeyRange
		if ok {
			if len(ranges) == 0 {
				// No row to join: nothing of the table can be kept.
				out[l.Table.ID] = zset.Batch{}
				continue
			}
			keyRanges = shardRanges(map[catalog.ID][]rsql.KeyRange{l.Table.ID: ranges})
		}
		b, err := s.readSnapshotKeys(ctx, snap, []*catalog.Relation{l.Table}, nil, keyRanges)
		if err != nil {
			return nil, err
		}
		out[l.Table.ID] = b[l.Table.ID]
	}
	return out, nil
}
