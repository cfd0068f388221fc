// Package subscriber is the edge actor of one SUBSCRIBE: it owns the
// subscriber's bounded queue of updates between the shard (which sends
// shard.SubscriptionUpdate values) and the pgwire connection goroutine
// (which asks for them with Take).
//
// One edge actor per subscription, not per session: a session runs at
// most one statement at a time, so a per-session actor would hold one
// subscription anyway, and a per-subscription actor lets the shard address
// a subscription by the actor id alone and lets the session's Close drop
// the whole queue by stopping the actor.
//
// Flow control is by credit: the edge grants the shard room for
// QueueUpdatesMax updates past what the connection has taken
// (shard.Subscribe.Through, then shard.SubscriptionCredit), so its queue
// never holds more than that; a subscriber that stops reading is kept
// behind in the view's durable change history by the shard, not in
// memory (actors/shard/subscription.go).
//
//	         Take, queue empty
//	open ──────────────────────────► waiting
//	 ▲ ◄─────────────────────────────┘
//	 │   an update or the end arrives: the Take is answered
//	 └── a Take with updates queued is answered at once
//
//	SubscriptionEnded, or a lost update (a Seq gap) → ended: the queued
//	updates are still taken, then every Take gets the error.
package subscriber
