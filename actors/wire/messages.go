package wire

import (
	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/actors/shard"
	"github.com/rockstream/rockstream/actors/subscriber"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/runtime"
)

// Messages lists a sample of every message type that crosses actors (sent,
// asked or replied; timers stay inside their actor and are not listed).
// One line per type: a new message type is added here, and
// messagelint_test.go fails for a type sent somewhere but missing here.
func Messages() []runtime.Message {
	return []runtime.Message{
		// The runtime's own.
		runtime.Started{},
		runtime.Stopping{},
		// Correlated requests between actors (runtime.Request).
		runtime.Request{},
		runtime.Response{},
		// The empty acknowledgement (ReleaseSnapshot, Unsubscribe).
		struct{}{},

		// actors/control.
		control.GetSnapshot{},
		control.SnapshotUnchanged{},
		control.SnapshotValue{},
		control.CreateRelation{},
		control.CreateIndex{},
		control.DropRelation{},
		control.DropSchema{},
		control.AddColumn{},
		control.SetPrimaryKey{},
		control.RenameRelation{},
		control.RecompileView{},
		control.SetViewOptions{},
		control.SetLateRows{},
		control.DDLResult{},
		control.SequenceOp{},
		control.SequenceValue{},
		control.GetSequenceStates{},
		control.AllocEpoch{},
		control.EpochAllocated{},
		control.GetEpochs{},
		control.SequenceStates{},
		control.GetRole{},
		control.RoleLookup{Role: control.Role{Grants: []control.Grant{{Privileges: control.PrivSelect}}}},
		control.GetRoles{},
		control.RoleList{Roles: []control.Role{{}}},
		control.CreateRole{},
		control.AlterRole{},
		control.DropRole{},
		control.GrantPrivileges{},
		control.RoleResult{},

		// actors/session: a connection's requests and their replies.
		session.Begin{},
		session.Statement{},
		session.Read{Points: []session.PointRead{{}}},
		session.PinReads{},
		session.UnpinReads{},
		session.Lookup{},
		session.LockTable{},
		session.Set{},
		session.Append{},
		session.Remove{},
		session.Savepoint{},
		session.RollbackTo{},
		session.Release{},
		session.Commit{},
		session.Rollback{},
		session.CancelWait{},
		session.GetState{},
		session.SequenceOp{},
		session.CurrVal{},
		session.LastVal{},
		session.SequenceCurrent{},
		session.Done{},
		session.ReadResult{},
		session.LookupResult{},
		session.Committed{},
		session.State{},

		// actors/shard.
		shard.SyncCatalog{},
		shard.Synced{},
		shard.Commit{},
		shard.Committed{},
		shard.SourceOffset{},
		shard.GetSourceOffset{},
		shard.Read{},
		shard.ReadResult{},
		shard.Lookup{},
		shard.LookupResult{},
		shard.OpenSnapshot{},
		shard.SnapshotOpened{},
		shard.ReleaseSnapshot{},
		shard.GetStatus{},
		shard.Status{},
		shard.Probe{},
		shard.Probed{},
		shard.Subscribe{},
		shard.Subscribed{},
		shard.Unsubscribe{},
		shard.SubscriptionCredit{},
		shard.SubscriptionUpdate{},
		shard.SubscriptionEnded{},
		shard.CancelBackfill{},
		shard.GetEpoch{},
		shard.ExchangeFrame{},
		shard.ExchangeAck{},
		shard.ExportRequest{},
		shard.ExportChunk{},
		shard.ExportAck{},
		shard.ExportPaused{},
		shard.ExportStart{},
		shard.SealThrough{},
		shard.Prepare{Writes: []shard.RowWrite{{}}},
		shard.Prepared{},
		shard.PrepareRefused{},
		shard.Decide{},
		shard.Decided{},
		shard.Resolve{},
		shard.Resolved{},
		shard.DecisionQuery{},
		shard.PinAt{},
		shard.PinViews{},
		shard.ViewsPinned{},
		shard.ReleasePin{},
		shard.StageSubscribe{},
		shard.StageData{Batches: []zset.Batch{{}}},
		// Row locks and the deadlock detector (actors/shard rowlock.go,
		// deadlock.go).
		shard.LockRows{},
		shard.RowsLocked{},
		shard.UnlockRows{},
		shard.RowsUnlocked{},
		shard.CancelLockWait{},
		shard.LockWaitCanceled{},
		shard.WaitFor{},
		shard.WaitEnded{},
		shard.BreakDeadlock{},

		// actors/subscriber (the edge actor of a SUBSCRIBE).
		subscriber.Take{},
		subscriber.Taken{},
		subscriber.Begin{},
	}
}

// standard is the codec of Messages.
//
//lint:immutable built once from a fixed list; a Codec is never changed after NewCodec.
var standard = mustCodec(Messages())

func mustCodec(samples []runtime.Message) *Codec {
	c, err := NewCodec(samples...)
	if err != nil {
		// INVARIANT: every listed type is a value (messagelint_test.go).
		panic(err)
	}
	return c
}

// Standard is the codec of every RockStream message type.
func Standard() *Codec { return standard }
