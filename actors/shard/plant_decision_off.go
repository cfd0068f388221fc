//go:build !plantbug_decisionnotdurable

package shard

// plantDecisionNotDurable: see plant_decision_on.go.
const plantDecisionNotDurable = false
