//go:build plantbug_lockbeforedurable

package shard

// plantLockBeforeDurable plants a bug: the shard lets a transaction's row
// locks go as soon as it grants them, long before the transaction's
// commit is durable, so another transaction can change a row between the
// holder's lookup and its commit. sim/system's
// TestPlantedLockBeforeDurableCaught asserts the simulation finds it.
//
// NB: releasing them when the Commit arrives instead (before its sync) is
// not observable: any Read or Lookup behind a pending commit waits for
// that commit's sync (groupcommit.go), so a waiter granted the lock early
// still reads only durable rows. The rule in rowlock.go is a second line
// of defence behind that one.
const plantLockBeforeDurable = true
