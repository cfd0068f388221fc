package slate

import (
	"context"
	"fmt"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// CheckpointOptions configures CreateCheckpoint.
type CheckpointOptions struct {
	// Lifetime: the checkpoint expires (GC removes it) after this long;
	// 0 means never (delete it with DeleteCheckpoint).
	Lifetime time.Duration
	// Name is an optional label (not unique).
	Name string
}

// CreateCheckpoint flushes the WAL and every memtable, then adds a checkpoint
// pinning the manifest it commits, so the checkpoint holds every write made
// before the call. Open a Reader with ReaderOptions.CheckpointID to read it.
func (d *DB) CreateCheckpoint(ctx context.Context, opts CheckpointOptions) (Checkpoint, error) {
	if err := d.FlushMemtable(ctx); err != nil {
		return Checkpoint{}, err
	}
	var cp Checkpoint
	putID := d.putID("checkpoint")
	m, err := commitManifest(ctx, d.store, d.manifest, manifestUpdate{
		putID: putID, nowMillis: d.nowMillis(),
		mutate: func(m *Manifest) error {
			if m.WriterEpoch != d.epoch {
				return fencedErr("manifest writer epoch is %d, this writer's is %d", m.WriterEpoch, d.epoch)
			}
			cp = Checkpoint{ID: "cp/" + putID, Name: opts.Name, ManifestID: m.ID + 1, CreatedMillis: d.nowMillis()}
			if opts.Lifetime > 0 {
				cp.ExpireMillis = d.nowTime().Add(opts.Lifetime).UnixMilli()
			}
			m.Checkpoints = append(m.Checkpoints, cp)
			return nil
		},
	})
	if err != nil {
		return Checkpoint{}, d.noteErr(err)
	}
	d.setManifest(m)
	return cp, nil
}

// DeleteCheckpoint removes a checkpoint (absent: no error).
func (d *DB) DeleteCheckpoint(ctx context.Context, id string) error {
	if err := d.check(); err != nil {
		return err
	}
	m, err := removeCheckpoint(ctx, d.store, d.manifest, d.putID("uncheckpoint"), d.nowMillis(), id)
	if err != nil {
		return err
	}
	d.setManifest(m)
	return nil
}

// DeleteCheckpoint removes a checkpoint of the database under path.
func DeleteCheckpoint(ctx context.Context, store objstore.Store, path, instanceID, id string, now time.Time) error {
	_, err := removeCheckpoint(ctx, objstore.Prefixed(store, path), nil, "admin/"+instanceID, now.UnixMilli(), id)
	return err
}

func removeCheckpoint(ctx context.Context, store objstore.Store, cur *Manifest, putID string, nowMillis int64, id string) (*Manifest, error) {
	return commitManifest(ctx, store, cur, manifestUpdate{
		putID: putID, nowMillis: nowMillis,
		mutate: func(m *Manifest) error {
			kept := m.Checkpoints[:0:0]
			for _, cp := range m.Checkpoints {
				if cp.ID != id {
					kept = append(kept, cp)
				}
			}
			m.Checkpoints = kept
			return nil
		},
	})
}

func findCheckpoint(m *Manifest, id string) (Checkpoint, bool) {
	for _, cp := range m.Checkpoints {
		if cp.ID == id {
			return cp, true
		}
	}
	return Checkpoint{}, false
}

func checkpointNotFound(id string) error {
	return fmt.Errorf("slate: checkpoint %q not found (expired or deleted): %w", id, objstore.ErrNotFound)
}
