package fsstore

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// What the store keeps besides objects, and why it stays bounded:
//
//   - Root/.locks holds fsLockStripes lock files at most. A key's mutations
//     flock the stripe its hash selects; keys sharing a stripe only
//     serialize their writes (an operation holds one stripe, so there is no
//     deadlock). One lock file per key kept an empty file for every key ever
//     deleted; removing a lock file safely would need an inode check after
//     every flock, which a fixed set of stripes avoids.
//   - Root/.tmp holds a write's temporary file from its creation to its
//     link or rename (milliseconds; seconds under a slow fsync). A write
//     killed in between leaves an orphan, so New removes temporary files
//     untouched for fsTmpOrphanAge.
//
// NB: New does not remove every temporary file, although slate has a single
// writer per store: New runs before the server checks it is that writer
// (a second server is refused only after opening the store), and the debug
// commands open a store a server may be using. A file untouched for
// fsTmpOrphanAge belongs to no live write, so removing it is safe under any
// number of processes.
const (
	// fsLockStripes bounds Root/.locks.
	fsLockStripes = 256
	// fsTmpOrphanAge: a temporary file older than this is an orphan. Far
	// above a write's life (create, write, fdatasync, link or rename).
	fsTmpOrphanAge = 10 * time.Minute
	// fsTmpPrefix starts every temporary file's name.
	fsTmpPrefix = "put-"
)

// lockStripeName is the lock file (in Root/.locks) guarding key.
func lockStripeName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return fmt.Sprintf("stripe-%03d.lock", binary.BigEndian.Uint32(sum[:4])%fsLockStripes)
}

// cleanAtOpen removes orphaned temporary files and the per-key lock files
// earlier builds left in Root/.locks.
//
// NB: a per-key lock file is only ever locked by an earlier build, and an
// earlier build never shares a store with this one (it must be stopped
// before this one starts: one server per store). Were it running, its
// per-key locks and these stripes would not exclude each other whether or
// not the files were removed.
func (s *Store) cleanAtOpen(now time.Time) error {
	tmp, err := os.ReadDir(filepath.Join(s.root, fsTmpDir))
	if err != nil {
		return fmt.Errorf("objstore fs: read %s: %w", fsTmpDir, err)
	}
	for _, e := range tmp {
		if !strings.HasPrefix(e.Name(), fsTmpPrefix) {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // its write finished meanwhile
		}
		if err != nil {
			return fmt.Errorf("objstore fs: stat %s/%s: %w", fsTmpDir, e.Name(), err)
		}
		if now.Sub(info.ModTime()) < fsTmpOrphanAge {
			continue
		}
		if err := os.Remove(filepath.Join(s.root, fsTmpDir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("objstore fs: remove orphaned %s/%s: %w", fsTmpDir, e.Name(), err)
		}
	}
	locks, err := os.ReadDir(filepath.Join(s.root, fsLocksDir))
	if err != nil {
		return fmt.Errorf("objstore fs: read %s: %w", fsLocksDir, err)
	}
	for _, e := range locks {
		if strings.HasPrefix(e.Name(), "stripe-") || !strings.HasSuffix(e.Name(), ".lock") {
			continue
		}
		if err := os.Remove(filepath.Join(s.root, fsLocksDir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("objstore fs: remove old lock file %s/%s: %w", fsLocksDir, e.Name(), err)
		}
	}
	return nil
}
