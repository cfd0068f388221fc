//go:build plantbug_decisionnotdurable

package shard

// plantDecisionNotDurable plants a bug: the home answers a transaction's
// decision before it is durable, so the session resolves the parts (one
// shows the transaction) while a crash can take the decision back, and a
// participant asking later is answered with an abort: the transaction
// shows on one shard only. TestPlantedDecisionNotDurableCaught asserts the
// simulation finds it.
const plantDecisionNotDurable = true
