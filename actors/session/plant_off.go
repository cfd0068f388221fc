//go:build !plantbug_rrnewsnapshot

package session

// plantRRNewSnapshot is the planted bug switch (off in normal builds).
const plantRRNewSnapshot = false
