package pgcdc

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/types"
)

// snapshot copies every mirrored table as of a new slot's consistent point
// and returns that point, committed with the last rows: streaming resumes
// there, so every change after the copy arrives exactly once.
func (s *Source) snapshot(ctx context.Context, repl *pgconn.PgConn) (uint64, error) {
	// NB: a slot left by an interrupted snapshot is useless: the snapshot
	// it exported died with the connection that created it.
	if err := dropSlot(ctx, repl, s.cfg.Slot); err != nil {
		return 0, err
	}
	// Rows an interrupted snapshot committed go first, so a row deleted
	// upstream since then does not survive in the mirror.
	for _, m := range s.cfg.Mirrors {
		rows, err := s.cfg.Sink.Rows(ctx, m.Relation.ID)
		if err != nil {
			return 0, err
		}
		var writes []shard.RowWrite
		for _, row := range rows {
			writes = append(writes, shard.RowWrite{Table: m.Relation.ID, Key: keyOf(m.Relation, row)})
			if len(writes) == batchRowsMax {
				if err := s.cfg.Sink.Commit(ctx, writes, 0); err != nil {
					return 0, err
				}
				writes = nil // the commit message shared the old slice
			}
		}
		if len(writes) > 0 {
			if err := s.cfg.Sink.Commit(ctx, writes, 0); err != nil {
				return 0, err
			}
		}
	}
	slot, err := pglogrepl.CreateReplicationSlot(ctx, repl, s.cfg.Slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{
		SnapshotAction: "EXPORT_SNAPSHOT", Mode: pglogrepl.LogicalReplication,
	})
	if err != nil {
		return 0, errcode.Wrap(errcode.ConnectorReplicationRefused, err, "cannot create replication slot %s upstream", s.cfg.Slot)
	}
	consistent, err := pglogrepl.ParseLSN(slot.ConsistentPoint)
	if err != nil || consistent == 0 {
		return 0, errcode.Wrap(errcode.ConnectorReplicationRefused, err, "replication slot %s has no consistent point (%q)", s.cfg.Slot, slot.ConsistentPoint)
	}
	q, err := connect(ctx, s.cfg.Connection, false)
	if err != nil {
		return 0, err
	}
	defer q.Close(context.Background())
	if _, err := q.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT "+quoteLiteral(slot.SnapshotName)).ReadAll(); err != nil {
		return 0, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot read the snapshot of replication slot %s", s.cfg.Slot)
	}
	var writes []shard.RowWrite
	copied := uint64(0)
	for _, m := range s.cfg.Mirrors {
		err := copyTable(ctx, q, m.Relation, func(row types.Row) error {
			writes = append(writes, shard.RowWrite{Table: m.Relation.ID, Row: row, Key: keyOf(m.Relation, row)})
			if len(writes) < batchRowsMax {
				return nil
			}
			if err := s.cfg.Sink.Commit(ctx, writes, 0); err != nil {
				return err
			}
			copied += uint64(len(writes))
			writes = nil // the commit message shared the old slice
			return nil
		})
		if err != nil {
			return 0, err
		}
	}
	// The last rows (possibly none) carry the consistent point: only now
	// is the snapshot complete.
	if err := s.cfg.Sink.Commit(ctx, writes, uint64(consistent)); err != nil {
		return 0, err
	}
	copied += uint64(len(writes))
	if _, err := q.Exec(ctx, "COMMIT").ReadAll(); err != nil {
		return 0, errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot end the snapshot transaction")
	}
	s.update(func(st *Status) { st.Rows += copied })
	s.cfg.Logger.Info("POSTGRES source copied its snapshot", "source", s.cfg.Name, "rows", copied, "lsn", consistent.String())
	return uint64(consistent), nil
}

// copyTable reads every row of a mirror's upstream table in the open
// snapshot transaction, in the mirror's column order.
func copyTable(ctx context.Context, q *pgconn.PgConn, rel *catalog.Relation, each func(types.Row) error) error {
	cols := make([]string, len(rel.Columns))
	for i, c := range rel.Columns {
		cols[i] = pgx.Identifier{c.Name}.Sanitize()
	}
	up := rel.Upstream
	sql := "SELECT " + strings.Join(cols, ", ") + " FROM ONLY " + pgx.Identifier{up.Schema, up.Table}.Sanitize()
	rr := q.ExecParams(ctx, sql, nil, nil, nil, nil)
	var eachErr error
	for rr.NextRow() {
		vals := rr.Values()
		row := make(types.Row, len(rel.Columns))
		for i, v := range vals {
			if v == nil {
				continue
			}
			d, err := types.Parse(rel.Columns[i].Type, string(v), nil)
			if err != nil {
				eachErr = blocked(errcode.Wrap(errcode.ConnectorDecodeError, err, "cannot read column %q of upstream table %s.%s", rel.Columns[i].Name, up.Schema, up.Table))
				break
			}
			row[i] = d
		}
		if eachErr != nil {
			break
		}
		if eachErr = each(row); eachErr != nil {
			break
		}
	}
	if _, err := rr.Close(); err != nil && eachErr == nil {
		return errcode.Wrap(errcode.ConnectorUnreachable, err, "cannot copy upstream table %s.%s", up.Schema, up.Table)
	}
	return eachErr
}

// keyOf is the primary key of a mirror row.
func keyOf(rel *catalog.Relation, row types.Row) types.Row {
	key := make(types.Row, len(rel.PrimaryKey))
	for i, c := range rel.PrimaryKey {
		key[i] = row[c]
	}
	return key
}

// dropSlot drops a replication slot if it exists, waiting for a walsender
// that still uses it (the previous process's, until the upstream notices
// that it died).
func dropSlot(ctx context.Context, repl *pgconn.PgConn, slot string) error {
	err := pglogrepl.DropReplicationSlot(ctx, repl, slot, pglogrepl.DropReplicationSlotOptions{Wait: true})
	var pgErr *pgconn.PgError
	if err == nil || errors.As(err, &pgErr) && pgErr.Code == "42704" {
		return nil
	}
	return errcode.Wrap(errcode.ConnectorReplicationRefused, err, "cannot drop replication slot %s upstream", slot)
}

// DropSlot drops a source's replication slot upstream (DROP SOURCE), so
// the upstream stops retaining WAL for it. A missing slot is no error.
func DropSlot(ctx context.Context, connString, slot string) error {
	repl, err := connect(ctx, connString, true)
	if err != nil {
		return err
	}
	defer repl.Close(context.Background())
	return dropSlot(ctx, repl, slot)
}
