//go:build !plantbug_framebeforedurable

package shard

// plantFrameBeforeDurable is the planted bug switch (off in normal builds).
const plantFrameBeforeDurable = false
