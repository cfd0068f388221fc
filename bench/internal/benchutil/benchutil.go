// Package benchutil holds what the RockStream benchmarks share: an embedded
// server in a temporary directory, process metrics (/proc), percentiles and
// a small hand-written SVG bar chart.
package benchutil

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rockstream/rockstream/engine"
)

// Server is an embedded RockStream server.
type Server struct {
	URL     string
	Dir     string
	run     *engine.Running
	ownsDir bool
}

// StartServer runs engine.Serve on a loopback port with storage in dir (a
// new temporary directory when dir is "") over shards shards (0: one).
func StartServer(dir string, shards int) (*Server, error) {
	return StartServerWith(dir, engine.ServerOptions{Shards: shards})
}

// StartServerWith is StartServer with the layout and experimental
// settings of opts (Shards, PartitionTables, ExchangeStages).
func StartServerWith(dir string, opts engine.ServerOptions) (*Server, error) {
	s := &Server{Dir: dir}
	if dir == "" {
		d, err := os.MkdirTemp("", "rockstream-bench-")
		if err != nil {
			return nil, err
		}
		s.Dir, s.ownsDir = d, true
	}
	run, err := engine.Start(engine.ServerOptions{
		Storage:         s.Dir,
		Shards:          opts.Shards,
		PartitionTables: opts.PartitionTables,
		ExchangeStages:  opts.ExchangeStages,
		Listen:          "127.0.0.1:0",
		HTTP:            "127.0.0.1:0",
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		Out:             io.Discard,
	}, 60*time.Second)
	if err != nil {
		return nil, err
	}
	s.run, s.URL = run, run.URL
	return s, nil
}

// ActorTime is one actor's time handling messages (Busy), and the part
// of it spent in object-store calls (Store).
type ActorTime struct{ Busy, Store time.Duration }

// ActorBusy scrapes the server's /metrics for the wall time each actor
// has spent handling messages (rockstream_actor_busy_seconds_total) and
// in object-store calls (rockstream_actor_store_seconds_total), by actor
// ("shard/0", "control", "session", ...). Differences of two scrapes
// over a run, against its elapsed time, show which actor is the
// bottleneck, which waits, and how much of a busy actor's time is
// storage.
func (s *Server) ActorBusy() (map[string]ActorTime, error) {
	resp, err := http.Get("http://" + s.run.HTTPAddr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	const busyPrefix, storePrefix = `rockstream_actor_busy_seconds_total{actor="`, `rockstream_actor_store_seconds_total{actor="`
	out := map[string]ActorTime{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		rest, busy := strings.CutPrefix(line, busyPrefix)
		if !busy {
			var ok bool
			if rest, ok = strings.CutPrefix(line, storePrefix); !ok {
				continue
			}
		}
		actor, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		seconds, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("metrics: %q: %w", line, err)
		}
		t := out[actor]
		if busy {
			t.Busy = time.Duration(seconds * float64(time.Second))
		} else {
			t.Store = time.Duration(seconds * float64(time.Second))
		}
		out[actor] = t
	}
	return out, sc.Err()
}

// Stop shuts the server down and removes its directory if it made it.
func (s *Server) Stop() {
	_ = s.run.Stop(30 * time.Second)
	if s.ownsDir {
		_ = os.RemoveAll(s.Dir)
	}
}

// DirBytes is the total size of the regular files under dir.
func DirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// procField reads "key: value" from a /proc file; 0 if missing.
func procField(path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			return 0
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		if len(fields) > 1 && fields[1] == "kB" {
			n *= 1024
		}
		return n
	}
	return 0
}

// PeakRSS is the process's peak resident set (VmHWM), in bytes.
func PeakRSS() int64 { return procField("/proc/self/status", "VmHWM") }

// ResetPeakRSS resets this process's VmHWM to its current RSS (writing 5
// to /proc/self/clear_refs), so PeakRSS measures from now on; it reports
// whether the kernel allowed it.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// WriteBytes is the bytes this process caused to be written to storage
// (/proc/self/io write_bytes; 0 where the kernel does not account it).
func WriteBytes() int64 { return procField("/proc/self/io", "write_bytes") }

// CPUSeconds is this process's user+system CPU time.
func CPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// Percentile returns the p-quantile (0..1) of d (sorted in place).
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	i := int(p * float64(len(d)))
	if i >= len(d) {
		i = len(d) - 1
	}
	return d[i]
}

// Series is one named group of bars in a chart.
type Series struct {
	Name   string
	Values []float64
}

// BarChartSVG writes a grouped bar chart: one group per category, one bar
// per series; log selects a log10 value axis (for values spanning decades).
func BarChartSVG(w io.Writer, title, unit string, categories []string, series []Series, log bool) error {
	const (
		width, height          = 900, 480
		left, right, top, bott = 90, 20, 50, 90
	)
	colors := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"}
	maxV, minV := 0.0, 0.0
	first := true
	for _, s := range series {
		for _, v := range s.Values {
			if v <= 0 && log {
				continue
			}
			if first || v > maxV {
				maxV = v
			}
			if first || v < minV {
				minV = v
			}
			first = false
		}
	}
	if maxV <= 0 {
		maxV = 1
	}
	scale := func(v float64) float64 { return v / maxV }
	var ticks []float64
	if log {
		lo, hi := floorPow10(minV), ceilPow10(maxV)
		if hi <= lo {
			hi = lo * 10
		}
		scale = func(v float64) float64 {
			if v <= 0 {
				return 0
			}
			return (log10(v) - log10(lo)) / (log10(hi) - log10(lo))
		}
		for t := lo; t <= hi*1.0001; t *= 10 {
			ticks = append(ticks, t)
		}
	} else {
		for i := 0; i <= 5; i++ {
			ticks = append(ticks, maxV*float64(i)/5)
		}
	}
	plotW, plotH := float64(width-left-right), float64(height-top-bott)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="25" font-size="16">%s</text>`+"\n", left, html.EscapeString(title))
	for _, t := range ticks {
		y := float64(top) + plotH*(1-scale(t))
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
			left, width-right, y, y, left-6, y+4, human(t))
	}
	fmt.Fprintf(&b, `<text transform="translate(18,%d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+int(plotH/2), html.EscapeString(unit))
	groupW := plotW / float64(max(len(categories), 1))
	barW := groupW * 0.8 / float64(max(len(series), 1))
	for ci, c := range categories {
		gx := float64(left) + groupW*float64(ci) + groupW*0.1
		for si, s := range series {
			if ci >= len(s.Values) {
				continue
			}
			h := plotH * scale(s.Values[ci])
			x := gx + barW*float64(si)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s</title></rect>`+"\n",
				x, float64(top)+plotH-h, barW*0.95, h, colors[si%len(colors)], html.EscapeString(s.Name), html.EscapeString(c), human(s.Values[ci]))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", gx+groupW*0.4, height-bott+18, html.EscapeString(c))
	}
	for si, s := range series {
		x := left + 160*si
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n",
			x, height-40, colors[si%len(colors)], x+16, height-30, html.EscapeString(s.Name))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func log10(v float64) float64 { return mathLog10(v) }

func floorPow10(v float64) float64 {
	p := 1.0
	if v <= 0 {
		return 1
	}
	for p*10 <= v {
		p *= 10
	}
	for p > v {
		p /= 10
	}
	return p
}

func ceilPow10(v float64) float64 {
	p := floorPow10(v)
	if p < v {
		p *= 10
	}
	return p
}

func human(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 3, 64) + "G"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "K"
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}
