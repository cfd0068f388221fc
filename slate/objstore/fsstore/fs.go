package fsstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rockstream/rockstream/slate/objstore"
)

// Store is an objstore.Store on a local (POSIX) filesystem. Every object is one file under
// Root whose path is the key. The file starts with a small header holding the
// object's version, then the object's bytes:
//
//	"RSOBJ1\n" | u16 versionLen | version | data
//
// Atomicity, across processes sharing the directory:
//   - every write goes to a temporary file in Root/.tmp, is fsynced, and then
//     becomes visible in one step: link(2) for PutIfAbsent (fails with EEXIST
//     if the key exists, so of N racing creators exactly one wins, even across
//     processes), rename(2) for Put and PutIfMatch; the key's directory is
//     fsynced afterwards so the new name survives a power loss;
//   - Put, PutIfMatch and Delete hold an exclusive flock(2) on the key's lock
//     stripe in Root/.locks, so PutIfMatch's compare-and-rename is atomic
//     with respect to every other mutation of the key in any process;
//   - New removes temporary files orphaned by killed writes (hygiene.go).
//
// A damaged header (magic, or a version length past the end of the file) is
// objstore.ErrCorrupt: reading again cannot help.
//
// A version is "<content crc>-<write id>": the write id combines this
// process's id, a per-store counter and the temporary file's unique name, so
// two writes of identical bytes still get distinct versions (CAS needs this).
//
// NB: keys are file paths, so one key cannot be a '/'-prefix of another ("a"
// and "a/b" cannot both exist). slate's bucket layout never does that.
type Store struct {
	root string
	mu   sync.Mutex
	// writeCounter makes write ids unique within this process and store.
	writeCounter uint64
}

//lint:immutable the CRC table is computed once and only read.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

const (
	fsMagic     = "RSOBJ1\n"
	fsTmpDir    = ".tmp"
	fsLocksDir  = ".locks"
	fsHeaderMin = len(fsMagic) + 2
)

// New opens (creating if needed) a filesystem store rooted at dir.
func New(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("objstore fs: %w", err)
	}
	for _, d := range []string{abs, filepath.Join(abs, fsTmpDir), filepath.Join(abs, fsLocksDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("objstore fs: create %s: %w", d, err)
		}
	}
	s := &Store{root: abs}
	if err := s.cleanAtOpen(time.Now()); err != nil {
		return nil, err
	}
	return s, nil
}

// Root is the directory the store lives in.
func (s *Store) Root() string { return s.root }

func (s *Store) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasPrefix(key, ".") {
		return "", fmt.Errorf("objstore fs: invalid key %q", key)
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." {
			return "", fmt.Errorf("objstore fs: invalid key %q", key)
		}
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

// lockKey takes an exclusive flock on the key's lock stripe (hygiene.go):
// keys of any shape map to a fixed set of files in one flat directory.
func (s *Store) lockKey(key string) (unlock func(), err error) {
	name := filepath.Join(s.root, fsLocksDir, lockStripeName(key))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("objstore fs: lock %q: %w", key, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("objstore fs: lock %q: %w", key, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// writeTemp writes header+data to a fresh fsynced temporary file and returns
// its path and the object's version.
func (s *Store) writeTemp(data []byte) (tmpPath string, version objstore.Version, err error) {
	f, err := os.CreateTemp(filepath.Join(s.root, fsTmpDir), fsTmpPrefix+"*")
	if err != nil {
		return "", "", fmt.Errorf("objstore fs: temp file: %w", err)
	}
	tmpPath = f.Name()
	fail := func(e error) (string, objstore.Version, error) {
		f.Close()
		os.Remove(tmpPath)
		return "", "", fmt.Errorf("objstore fs: write temp: %w", e)
	}
	s.mu.Lock()
	s.writeCounter++
	counter := s.writeCounter
	s.mu.Unlock()
	// NB: a CRC32C (hardware-accelerated) rather than a cryptographic hash:
	// uniqueness comes from the write id, the hash only helps a human.
	version = objstore.Version(fmt.Sprintf("%08x-%x-%x-%s", crc32.Checksum(data, castagnoli), os.Getpid(), counter,
		strings.TrimPrefix(filepath.Base(tmpPath), fsTmpPrefix)))
	header := make([]byte, 0, fsHeaderMin+len(version))
	header = append(header, fsMagic...)
	header = binary.BigEndian.AppendUint16(header, uint16(len(version)))
	header = append(header, version...)
	if _, err := f.Write(header); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	// fdatasync: the data and the size (needed to read it back) reach the
	// disk; the name is made durable by the directory fsync after link/rename.
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmpPath)
		return "", "", fmt.Errorf("objstore fs: close temp: %w", err)
	}
	return tmpPath, version, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readHeader opens key's file and positions it after the header.
func (s *Store) open(key string) (*os.File, objstore.Version, int64, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, "", 0, err
	}
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil, "", 0, fmt.Errorf("get %q: %w", key, objstore.ErrNotFound)
		}
		return nil, "", 0, fmt.Errorf("objstore fs: open %q: %w", key, err)
	}
	var fixed [fsHeaderMin]byte
	if _, err := io.ReadFull(f, fixed[:]); err != nil || string(fixed[:len(fsMagic)]) != fsMagic {
		f.Close()
		return nil, "", 0, fmt.Errorf("objstore fs: %q is not an object file (bad header): %w", key, objstore.ErrCorrupt)
	}
	n := int(binary.BigEndian.Uint16(fixed[len(fsMagic):]))
	vb := make([]byte, n)
	if _, err := io.ReadFull(f, vb); err != nil {
		f.Close()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, "", 0, fmt.Errorf("objstore fs: %q: header longer than the file: %w", key, objstore.ErrCorrupt)
		}
		return nil, "", 0, fmt.Errorf("objstore fs: %q: read header: %w", key, err)
	}
	return f, objstore.Version(vb), int64(fsHeaderMin + n), nil
}

// Get implements objstore.Store.
func (s *Store) Get(_ context.Context, key string) (objstore.Object, error) {
	f, v, _, err := s.open(key)
	if err != nil {
		return objstore.Object{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return objstore.Object{}, fmt.Errorf("objstore fs: read %q: %w", key, err)
	}
	return objstore.Object{Data: data, Version: v}, nil
}

// fsHeaderProbe is how much of the header one pread fetches; versions are
// shorter, so a range read costs open + 2 preads + close.
const fsHeaderProbe = 128

// GetRange implements objstore.Store. It uses raw syscalls: range reads are the SST
// block path, and os.File's poller registration doubled their cost.
func (s *Store) GetRange(_ context.Context, key string, offset, length int64) ([]byte, error) {
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("get range %q: negative offset %d or length %d", key, offset, length)
	}
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	for errors.Is(err, syscall.EINTR) {
		fd, err = syscall.Open(p, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("get range %q: %w", key, objstore.ErrNotFound)
		}
		return nil, fmt.Errorf("objstore fs: open %q: %w", key, err)
	}
	defer syscall.Close(fd)
	var probe [fsHeaderProbe]byte
	n, err := preadFull(fd, probe[:], 0)
	if err != nil {
		return nil, fmt.Errorf("objstore fs: read %q: %w", key, err)
	}
	if n < fsHeaderMin || string(probe[:len(fsMagic)]) != fsMagic {
		return nil, fmt.Errorf("objstore fs: %q is not an object file (bad header): %w", key, objstore.ErrCorrupt)
	}
	headerLen := int64(fsHeaderMin + int(binary.BigEndian.Uint16(probe[len(fsMagic):])))
	if headerLen > int64(n) && n < fsHeaderProbe {
		return nil, fmt.Errorf("objstore fs: %q: header longer than the file: %w", key, objstore.ErrCorrupt)
	}
	if headerLen > int64(n) && headerLen > fsHeaderProbe {
		// Unusually long version: fall back to the general path.
		f, _, hl, err := s.open(key)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		buf := make([]byte, length)
		m, err := f.ReadAt(buf, hl+offset)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("objstore fs: read %q: %w", key, err)
		}
		return buf[:m], nil
	}
	buf := make([]byte, length)
	m, err := preadFull(fd, buf, headerLen+offset)
	if err != nil {
		return nil, fmt.Errorf("objstore fs: read %q: %w", key, err)
	}
	return buf[:m], nil
}

// preadFull reads until buf is full or the file ends.
func preadFull(fd int, buf []byte, off int64) (int, error) {
	total := 0
	for total < len(buf) {
		n, err := syscall.Pread(fd, buf[total:], off+int64(total))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return total, err
		}
		if n == 0 {
			break
		}
		total += n
	}
	return total, nil
}

func (s *Store) install(key string, data []byte, check func(current objstore.Version, exists bool) error) (objstore.Version, error) {
	p, err := s.path(key)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("objstore fs: mkdir for %q: %w", key, err)
	}
	tmp, v, err := s.writeTemp(data)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	unlock, err := s.lockKey(key)
	if err != nil {
		return "", err
	}
	defer unlock()
	if check != nil {
		f, cur, _, err := s.open(key)
		exists := err == nil
		if err != nil && !errors.Is(err, objstore.ErrNotFound) {
			return "", err
		}
		if exists {
			f.Close()
		}
		if err := check(cur, exists); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, p); err != nil {
		return "", fmt.Errorf("objstore fs: rename into %q: %w", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return "", fmt.Errorf("objstore fs: fsync dir of %q: %w", key, err)
	}
	return v, nil
}

// Put implements objstore.Store.
func (s *Store) Put(_ context.Context, key string, data []byte) (objstore.Version, error) {
	return s.install(key, data, nil)
}

// PutIfMatch implements objstore.Store.
func (s *Store) PutIfMatch(_ context.Context, key string, data []byte, match objstore.Version) (objstore.Version, error) {
	return s.install(key, data, func(cur objstore.Version, exists bool) error {
		if !exists {
			return fmt.Errorf("put-if-match %q: %w", key, objstore.ErrNotFound)
		}
		if cur != match {
			return fmt.Errorf("put-if-match %q: version %s, want %s: %w", key, cur, match, objstore.ErrPreconditionFailed)
		}
		return nil
	})
}

// PutIfAbsent implements objstore.Store. link(2) refuses to replace an existing name,
// which makes the create atomic across processes without a lock.
func (s *Store) PutIfAbsent(_ context.Context, key string, data []byte) (objstore.Version, error) {
	p, err := s.path(key)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("objstore fs: mkdir for %q: %w", key, err)
	}
	tmp, v, err := s.writeTemp(data)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("put-if-absent %q: %w", key, objstore.ErrPreconditionFailed)
		}
		return "", fmt.Errorf("objstore fs: link into %q: %w", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return "", fmt.Errorf("objstore fs: fsync dir of %q: %w", key, err)
	}
	return v, nil
}

// Delete implements objstore.Store.
func (s *Store) Delete(_ context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	unlock, err := s.lockKey(key)
	if err != nil {
		return err
	}
	defer unlock()
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("objstore fs: delete %q: %w", key, err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("objstore fs: fsync dir of %q: %w", key, err)
	}
	return nil
}

// List implements objstore.Store.
func (s *Store) List(_ context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	// Walk only the deepest directory the prefix fully names.
	dirKey := ""
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dirKey = prefix[:i]
	}
	start := s.root
	if dirKey != "" {
		p, err := s.path(dirKey)
		if err != nil {
			return nil, err
		}
		start = p
	}
	var out []objstore.ObjectInfo
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		rel, rerr := filepath.Rel(s.root, p)
		if rerr != nil {
			return rerr
		}
		key := filepath.ToSlash(rel)
		if d.IsDir() {
			if p != start && (key == fsTmpDir || key == fsLocksDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(key, prefix) || strings.HasPrefix(key, ".") {
			return nil
		}
		f, v, headerLen, oerr := s.open(key)
		if oerr != nil {
			if errors.Is(oerr, objstore.ErrNotFound) {
				return nil // deleted while listing
			}
			return oerr
		}
		st, serr := f.Stat()
		f.Close()
		if serr != nil {
			return serr
		}
		out = append(out, objstore.ObjectInfo{Key: key, Size: st.Size() - headerLen, Version: v})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("objstore fs: list %q: %w", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

var _ objstore.Store = (*Store)(nil)
