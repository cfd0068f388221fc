//go:build !plantbug_spreadmeet

package shard

// plantSpreadUnmet is the planted bug switch (off in normal builds).
const plantSpreadUnmet = false
