//go:build !plantbug_lockbeforedurable

package shard

// plantLockBeforeDurable is the planted bug switch (off in normal builds).
const plantLockBeforeDurable = false
