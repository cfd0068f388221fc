// Package slt runs sqllogictest files against RockStream in two modes:
//
//   - ad hoc: every query record runs as a SELECT;
//   - IVM: every query record is first created as a MATERIALIZED VIEW at the
//     start of its data segment (right after the last DDL statement before
//     it), the segment's data statements then run, and the query's result is
//     read back from the view — so the answer comes from incremental
//     maintenance, not from a one-shot query.
//
// Two dialects are parsed: SQLite's classic format (`.test`: one value per
// line, hash-threshold, labels, skipif/onlyif, halt) and the sqllogictest-rs
// dialect of the RisingWave corpus (`.slt`, `.slt.part`: one row per line,
// `statement error <regex>`, `query error`, `flush`).
package slt

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Dialect selects the result layout of a file.
type Dialect int

const (
	// Classic is SQLite's format: one value per line.
	Classic Dialect = iota
	// RS is sqllogictest-rs: one row per line, whitespace-separated.
	RS
)

// Kind of a record.
type Kind int

const (
	KStatement Kind = iota
	KQuery
	KHashThreshold
	KHalt
	KUnsupported // a directive this runner does not run (include, system, control, ...)
)

// Record is one record of a file.
type Record struct {
	Kind      Kind
	Line      int    // 1-based line of the directive
	SQL       string // statement or query text
	ExpectErr bool   // statement error / query error
	Types     string // query column type letters
	Sort      string // nosort, rowsort, valuesort
	Label     string
	Expected  []string // result lines after ----
	Threshold int      // hash-threshold value
	Skip      string   // non-empty: why the record is skipped (skipif/onlyif)
	Directive string   // KUnsupported: the directive text
}

// Engine is the name matched by skipif/onlyif.
const Engine = "postgresql"

// ParseFile reads and parses path; the dialect follows the extension.
func ParseFile(path string) ([]Record, Dialect, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	d := Classic
	if strings.HasSuffix(path, ".slt") || strings.HasSuffix(path, ".slt.part") {
		d = RS
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, 0, err
	}
	recs, err := Parse(lines, d)
	return recs, d, err
}

// Parse parses the lines of a file.
func Parse(lines []string, d Dialect) ([]Record, error) {
	var out []Record
	i := 0
	n := len(lines)
	isComment := func(s string) bool { return strings.HasPrefix(s, "#") }
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	for i < n {
		l := lines[i]
		if blank(l) || isComment(l) {
			i++
			continue
		}
		// Conditions preceding a record.
		skip := ""
		start := i
		for i < n {
			f := strings.Fields(lines[i])
			if len(f) >= 2 && (f[0] == "skipif" || f[0] == "onlyif") {
				if f[0] == "skipif" && f[1] == Engine {
					skip = "skipif " + Engine
				}
				if f[0] == "onlyif" && f[1] != Engine {
					skip = "onlyif " + f[1]
				}
				i++
				continue
			}
			if isComment(lines[i]) {
				i++
				continue
			}
			break
		}
		if i >= n {
			break
		}
		f := strings.Fields(lines[i])
		if len(f) == 0 {
			i++
			continue
		}
		rec := Record{Line: i + 1, Skip: skip}
		_ = start
		// body collects lines until a blank line (comments dropped).
		body := func(from int) ([]string, int) {
			var b []string
			j := from
			for j < n && !blank(lines[j]) {
				if !isComment(lines[j]) {
					b = append(b, lines[j])
				}
				j++
			}
			return b, j
		}
		switch f[0] {
		case "statement":
			rec.Kind = KStatement
			if len(f) < 2 {
				return nil, fmt.Errorf("line %d: statement without ok/error", i+1)
			}
			rec.ExpectErr = f[1] == "error"
			if f[1] != "ok" && f[1] != "error" && f[1] != "count" {
				return nil, fmt.Errorf("line %d: unknown statement mode %q", i+1, f[1])
			}
			b, j := body(i + 1)
			rec.SQL = strings.Join(b, "\n")
			i = j
		case "query":
			rec.Kind = KQuery
			if len(f) >= 2 && f[1] == "error" {
				rec.ExpectErr = true
			} else {
				if len(f) >= 2 {
					rec.Types = f[1]
				}
				rec.Sort = "nosort"
				if len(f) >= 3 {
					rec.Sort = f[2]
				}
				if len(f) >= 4 {
					rec.Label = f[3]
				}
			}
			b, j := body(i + 1)
			k := 0
			var sql []string
			for k < len(b) && b[k] != "----" {
				sql = append(sql, b[k])
				k++
			}
			rec.SQL = strings.Join(sql, "\n")
			if k < len(b) {
				rec.Expected = append([]string{}, b[k+1:]...)
			}
			i = j
			// sqllogictest-rs: results may continue after a blank line? No:
			// a blank line ends the record in both dialects.
		case "hash-threshold":
			rec.Kind = KHashThreshold
			if len(f) >= 2 {
				rec.Threshold, _ = strconv.Atoi(f[1])
			}
			i++
		case "halt":
			rec.Kind = KHalt
			i++
		default:
			rec.Kind = KUnsupported
			rec.Directive = lines[i]
			_, j := body(i + 1)
			i = j
		}
		out = append(out, rec)
	}
	return out, nil
}
