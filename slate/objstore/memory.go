package objstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Memory is an in-memory Store. It is the simulator's backing store and the
// reference every other backend is compared with. Safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	objects map[string]memoryObject
	// nextVersion makes every write's version unique within this store, so a
	// rewrite with identical bytes still changes the version (as S3 ETags do
	// not guarantee, and CAS needs).
	nextVersion uint64
}

type memoryObject struct {
	data    []byte
	version Version
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{objects: make(map[string]memoryObject)}
}

func (m *Memory) newVersion() Version {
	m.nextVersion++
	return Version(fmt.Sprintf("v%d", m.nextVersion))
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) (Object, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[key]
	if !ok {
		return Object{}, fmt.Errorf("get %q: %w", key, ErrNotFound)
	}
	return Object{Data: append([]byte(nil), o.data...), Version: o.version}, nil
}

// GetRange implements Store.
func (m *Memory) GetRange(_ context.Context, key string, offset, length int64) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[key]
	if !ok {
		return nil, fmt.Errorf("get range %q: %w", key, ErrNotFound)
	}
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("get range %q: negative offset %d or length %d", key, offset, length)
	}
	size := int64(len(o.data))
	if offset >= size {
		return []byte{}, nil
	}
	end := min(offset+length, size)
	return append([]byte(nil), o.data[offset:end]...), nil
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, key string, data []byte) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.newVersion()
	m.objects[key] = memoryObject{data: append([]byte(nil), data...), version: v}
	return v, nil
}

// PutIfAbsent implements Store.
func (m *Memory) PutIfAbsent(_ context.Context, key string, data []byte) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objects[key]; ok {
		return "", fmt.Errorf("put-if-absent %q: %w", key, ErrPreconditionFailed)
	}
	v := m.newVersion()
	m.objects[key] = memoryObject{data: append([]byte(nil), data...), version: v}
	return v, nil
}

// PutIfMatch implements Store.
func (m *Memory) PutIfMatch(_ context.Context, key string, data []byte, match Version) (Version, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[key]
	if !ok {
		return "", fmt.Errorf("put-if-match %q: %w", key, ErrNotFound)
	}
	if o.version != match {
		return "", fmt.Errorf("put-if-match %q: version %s, want %s: %w", key, o.version, match, ErrPreconditionFailed)
	}
	v := m.newVersion()
	m.objects[key] = memoryObject{data: append([]byte(nil), data...), version: v}
	return v, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
	return nil
}

// List implements Store.
func (m *Memory) List(_ context.Context, prefix string) ([]ObjectInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ObjectInfo
	//lint:maprange the result is sorted below before it leaves this function.
	for k, o := range m.objects {
		if strings.HasPrefix(k, prefix) {
			out = append(out, ObjectInfo{Key: k, Size: int64(len(o.data)), Version: o.version})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

var _ Store = (*Memory)(nil)

// Clone returns an independent copy of the store (same keys, bytes and
// versions): a crash image to damage or replay without touching m.
func (m *Memory) Clone() *Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := &Memory{objects: make(map[string]memoryObject, len(m.objects)), nextVersion: m.nextVersion}
	//lint:maprange copying into a map; order cannot matter.
	for k, o := range m.objects {
		out.objects[k] = memoryObject{data: append([]byte(nil), o.data...), version: o.version}
	}
	return out
}
