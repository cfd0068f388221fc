package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rockstream/rockstream/slate/objstore"
)

// meteredStore counts object-store requests and their latency by operation
// and by the kind of object (WAL, manifest, SST, other), for /metrics.
type meteredStore struct {
	inner    objstore.Store
	requests *prometheus.CounterVec
	errors   *prometheus.CounterVec
	latency  *prometheus.HistogramVec

	// writeMu guards writeFailure: the last write's error text, "" once a
	// write succeeds again (Failing, for /readyz).
	writeMu      sync.Mutex
	writeFailure string
}

// Failing says why the store is failing writes ("" when the last write
// succeeded): a read-only or full disk, a bucket refusing writes.
func (m *meteredStore) Failing() string {
	m.writeMu.Lock()
	defer m.writeMu.Unlock()
	return m.writeFailure
}

// storeFailureReason names the operating-system cause operators look for
// first (ENOSPC, EACCES, EROFS) before the error text.
func storeFailureReason(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "storage is failing writes: no space left on device (ENOSPC): " + err.Error()
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "storage is failing writes: permission denied (EACCES): " + err.Error()
	case errors.Is(err, syscall.EROFS):
		return "storage is failing writes: read-only file system (EROFS): " + err.Error()
	}
	return "storage is failing writes: " + err.Error()
}

func newMeteredStore(inner objstore.Store, reg prometheus.Registerer) *meteredStore {
	m := &meteredStore{
		inner: inner,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rockstream_object_store_requests_total", Help: "Object-store requests by operation and object kind.",
		}, []string{"op", "object"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rockstream_object_store_errors_total", Help: "Failed object-store requests by operation and object kind.",
		}, []string{"op", "object"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rockstream_object_store_request_seconds", Help: "Object-store request latency.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"op"}),
	}
	reg.MustRegister(m.requests, m.errors, m.latency)
	return m
}

// objectKind classifies a key by slate's bucket layout.
func objectKind(key string) string {
	switch {
	case strings.Contains(key, "wal/"):
		return "wal"
	case strings.Contains(key, "manifest/"):
		return "manifest"
	case strings.Contains(key, "compacted/"):
		return "sst"
	}
	return "other"
}

func (m *meteredStore) observe(op, key string, start time.Time, err error) {
	kind := objectKind(key)
	m.requests.WithLabelValues(op, kind).Inc()
	// NB: a not-found read and a refused conditional write are answers, not
	// failures: slate probes for objects and races writers by design, so
	// counting them would show a healthy server with errors.
	outcome := errors.Is(err, objstore.ErrNotFound) || errors.Is(err, objstore.ErrPreconditionFailed)
	if err != nil && !outcome {
		m.errors.WithLabelValues(op, kind).Inc()
	}
	if op != "get" && op != "get_range" && op != "list" {
		m.writeMu.Lock()
		if err != nil && !outcome {
			m.writeFailure = storeFailureReason(err)
		} else {
			m.writeFailure = ""
		}
		m.writeMu.Unlock()
	}
	m.latency.WithLabelValues(op).Observe(time.Since(start).Seconds())
}

func (m *meteredStore) Get(ctx context.Context, key string) (objstore.Object, error) {
	start := time.Now()
	o, err := m.inner.Get(ctx, key)
	m.observe("get", key, start, err)
	return o, err
}

func (m *meteredStore) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	start := time.Now()
	b, err := m.inner.GetRange(ctx, key, offset, length)
	m.observe("get_range", key, start, err)
	return b, err
}

func (m *meteredStore) Put(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	start := time.Now()
	v, err := m.inner.Put(ctx, key, data)
	m.observe("put", key, start, err)
	return v, err
}

func (m *meteredStore) PutIfAbsent(ctx context.Context, key string, data []byte) (objstore.Version, error) {
	start := time.Now()
	v, err := m.inner.PutIfAbsent(ctx, key, data)
	m.observe("put_if_absent", key, start, err)
	return v, err
}

func (m *meteredStore) PutIfMatch(ctx context.Context, key string, data []byte, match objstore.Version) (objstore.Version, error) {
	start := time.Now()
	v, err := m.inner.PutIfMatch(ctx, key, data, match)
	m.observe("put_if_match", key, start, err)
	return v, err
}

func (m *meteredStore) Delete(ctx context.Context, key string) error {
	start := time.Now()
	err := m.inner.Delete(ctx, key)
	m.observe("delete", key, start, err)
	return err
}

func (m *meteredStore) List(ctx context.Context, prefix string) ([]objstore.ObjectInfo, error) {
	start := time.Now()
	l, err := m.inner.List(ctx, prefix)
	m.observe("list", prefix, start, err)
	return l, err
}

var _ objstore.Store = (*meteredStore)(nil)
