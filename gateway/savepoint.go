package gateway

import (
	"context"
	"maps"

	"github.com/rockstream/rockstream/errcode"
)

// savepoint is an open SAVEPOINT of the explicit block: the session state
// ROLLBACK TO SAVEPOINT restores besides the engine's pending writes.
type savepoint struct {
	name          string
	settings      *Settings
	localSettings map[string]string
	notify        notifyMark
}

// savepointCmd runs SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT
// with PostgreSQL's rules: only inside an explicit block; a duplicate name
// shadows the older savepoint; RELEASE and ROLLBACK TO pick the newest of
// that name and destroy every later savepoint; ROLLBACK TO keeps its
// savepoint and is the one of the three allowed in a failed block, which
// it makes usable again.
func (c *conn) savepointCmd(ctx context.Context, st *statement) error {
	if c.state == txIdle {
		verb := map[stmtKind]string{kindSavepoint: "SAVEPOINT", kindRelease: "RELEASE SAVEPOINT", kindRollbackTo: "ROLLBACK TO SAVEPOINT"}[st.kind]
		return errcode.New(errcode.SavepointOutsideBlock, "%s can only be used in transaction blocks", verb)
	}
	sp, ok := c.session.(SavepointSession)
	if !ok {
		return errcode.New(errcode.GatewayUnsupported, "savepoints are not supported by this engine")
	}
	if st.kind == kindSavepoint {
		if err := c.ensureTx(ctx); err != nil {
			return err
		}
		if err := sp.Savepoint(ctx); err != nil {
			return err
		}
		c.savepoints = append(c.savepoints, savepoint{name: st.name, settings: c.settings, localSettings: maps.Clone(c.localSettings), notify: c.notifyMark()})
		return nil
	}
	depth := 0
	for i := len(c.savepoints) - 1; i >= 0; i-- {
		if c.savepoints[i].name == st.name {
			depth = i + 1
			break
		}
	}
	if depth == 0 {
		return errcode.New(errcode.UnknownSavepoint, "savepoint %q does not exist", st.name)
	}
	if st.kind == kindRelease {
		if c.engineTx {
			if err := sp.ReleaseSavepoint(ctx, depth); err != nil {
				return err
			}
		}
		c.savepoints = c.savepoints[:depth-1]
		return nil
	}
	// ROLLBACK TO: cursors opened after the savepoint may read undone
	// writes; PostgreSQL closes them, and so do we (all portals: the
	// protocol-level ones of this block are not kept across it anyway).
	c.closeAllPortals()
	if c.engineTx {
		if err := sp.RollbackToSavepoint(ctx, depth); err != nil {
			return err
		}
	}
	saved := c.savepoints[depth-1]
	c.savepoints = c.savepoints[:depth]
	c.setSettings(saved.settings)
	c.localSettings = maps.Clone(saved.localSettings)
	c.rollbackNotifyTo(saved.notify)
	c.state = txInBlock
	return nil
}
