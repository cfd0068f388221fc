//go:build !plantbug_viewunpinned

package session

// plantViewUnpinned is the planted bug switch (off in normal builds).
const plantViewUnpinned = false
