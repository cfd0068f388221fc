//go:build !plantbug_ackbeforedurable

package system

// plantAckBeforeDurable is the planted bug switch (off in normal builds).
const plantAckBeforeDurable = false
