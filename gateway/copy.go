package gateway

import (
	"bytes"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/types"
)

// COPY (spec §12.6.2). The gateway parses COPY statements and the COPY data
// stream; the engine only sees a CopyInSink receiving typed rows in bounded
// chunks (COPY FROM) or an ordinary query (COPY TO).

const (
	// copyChunkRowsMax bounds the rows handed to CopyInSink.Write at once
	// (spec §12.6.2 MAX_COPY_IN_BATCH_ROWS): the gateway's COPY buffer never
	// holds more than this many parsed rows. Simulation range: 1..10_000.
	copyChunkRowsMax = 10_000
	// copyChunkBytesMax bounds the raw bytes behind one chunk (spec
	// §12.6.2 COPY_IN_FLUSH_BYTES); whichever limit is reached first flushes.
	copyChunkBytesMax = 64 << 20
	// copyLineBytesMax bounds one line (record) of COPY input still being
	// assembled from CopyData messages; a longer line is an error, not
	// unbounded growth.
	copyLineBytesMax = 64 << 20
	// copyOutFlushBytes is how much COPY TO output is gathered into one
	// CopyData message before it is sent.
	copyOutFlushBytes = 64 << 10
)

type copyFormat uint8

const (
	copyText copyFormat = iota
	copyCSV
	copyBinary
)

// copySpec is a parsed COPY statement.
type copySpec struct {
	from          bool
	schema, table string
	columns       []string
	// query is the SELECT of `COPY (query) TO STDOUT`, or the SELECT the
	// gateway builds for `COPY table TO STDOUT`.
	query     string
	format    copyFormat
	delimiter byte
	null      string
	header    bool
	quote     byte
	escape    byte
}

func classifyCopy(cs *pg_query.CopyStmt, version int32, st *statement) {
	bad := func(format string, args ...any) {
		st.kind = kindUnsupported
		st.err = errcode.New(errcode.CopyMalformedStatement, format, args...)
	}
	if cs.IsProgram || cs.Filename != "" {
		bad("COPY to or from a server file or program is not supported; use FROM STDIN / TO STDOUT (psql: \\copy)")
		return
	}
	if cs.WhereClause != nil {
		bad("COPY FROM ... WHERE is not supported")
		return
	}
	spec := &copySpec{from: cs.IsFrom, format: copyText, delimiter: '\t', null: `\N`, quote: '"', escape: '"'}
	nullSet, delimSet := false, false
	for _, o := range cs.Options {
		def := o.GetDefElem()
		if def == nil {
			continue
		}
		val := constString(def.Arg)
		switch def.Defname {
		case "format":
			switch strings.ToLower(val) {
			case "text":
				spec.format = copyText
			case "csv":
				spec.format = copyCSV
			case "binary":
				spec.format = copyBinary
			default:
				bad("COPY format %q not recognized", val)
				return
			}
		case "delimiter":
			if len(val) != 1 {
				bad("COPY delimiter must be a single one-byte character")
				return
			}
			spec.delimiter, delimSet = val[0], true
		case "null":
			spec.null, nullSet = val, true
		case "header":
			spec.header = def.Arg == nil || val == "on" || val == "1" || strings.EqualFold(val, "true")
			if strings.EqualFold(val, "match") {
				spec.header = true
			}
		case "quote":
			if len(val) != 1 {
				bad("COPY quote must be a single one-byte character")
				return
			}
			spec.quote = val[0]
		case "escape":
			if len(val) != 1 {
				bad("COPY escape must be a single one-byte character")
				return
			}
			spec.escape = val[0]
		case "encoding":
			if _, err := normalizeEncoding(val); err != nil {
				bad("COPY encoding %q is not supported; only UTF8", val)
				return
			}
		case "freeze":
		default:
			bad("COPY option %q is not supported", def.Defname)
			return
		}
	}
	if spec.format == copyBinary {
		for _, o := range cs.Options {
			if def := o.GetDefElem(); def != nil && def.Defname != "format" && def.Defname != "freeze" && def.Defname != "encoding" {
				bad("cannot specify %s in BINARY mode", strings.ToUpper(def.Defname))
				return
			}
		}
	}
	if spec.format == copyCSV {
		if !delimSet {
			spec.delimiter = ','
		}
		if !nullSet {
			spec.null = ""
		}
	} else if spec.header && spec.from {
		// PostgreSQL 15 allows HEADER for text too.
		spec.header = true
	}
	for _, a := range cs.Attlist {
		if s := a.GetString_(); s != nil {
			spec.columns = append(spec.columns, s.Sval)
		}
	}
	if cs.Relation != nil {
		spec.schema, spec.table = cs.Relation.Schemaname, cs.Relation.Relname
	}
	if !spec.from {
		if cs.Query != nil {
			q, err := pg_query.Deparse(&pg_query.ParseResult{Version: version, Stmts: []*pg_query.RawStmt{{Stmt: cs.Query}}})
			if err != nil {
				bad("cannot read the query of COPY (...) TO: %v", err)
				return
			}
			spec.query = q
		} else {
			cols := "*"
			if len(spec.columns) > 0 {
				quoted := make([]string, len(spec.columns))
				for i, c := range spec.columns {
					quoted[i] = quoteIdent(c)
				}
				cols = strings.Join(quoted, ", ")
			}
			rel := quoteIdent(spec.table)
			if spec.schema != "" {
				rel = quoteIdent(spec.schema) + "." + rel
			}
			spec.query = "SELECT " + cols + " FROM " + rel
		}
		st.kind = kindCopyTo
	} else {
		st.kind = kindCopyFrom
	}
	st.copy = spec
}

func quoteIdent(s string) string {
	if !needsIdentQuote(s) && !strings.Contains(s, "$") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// copyDecoder turns COPY FROM data into records (one per line, or per CSV
// record spanning lines), holding at most one incomplete record.
type copyDecoder struct {
	spec    *copySpec
	pending []byte
	// line is the number of the last line handed out (1-based, header
	// included, as PostgreSQL's error context counts).
	line int64
	// ended is set once the `\.` end marker was seen; later data is ignored.
	ended bool
	// headerSkipped records that the header line was consumed.
	headerSkipped bool
	// scanned is how far recordEnd has searched pending for the first
	// record's end, and scanInQuote whether a CSV quote is open there: a
	// long record arriving in many CopyData messages is scanned once, not
	// once per message (which made COPY quadratic in the field size).
	scanned     int
	scanInQuote bool
	// work counts the bytes recordEnd examined and feed moved to the front
	// of pending: a test holds it linear in the data fed.
	work int64
	// text is a string copy of the complete records of the pending data
	// one feed call consumes (from offset textAt of that call's buffer),
	// made once per call, and fields and values are the slabs the records'
	// fields are carved from (reused by the next call): a line costs no
	// allocation of its own.
	text   string
	textAt int
	fields []*string
	values []string
	// out is the record list feed returns, reused by the next call.
	out [][]*string
}

// feed appends data and returns the complete records, each already split
// into fields (nil field = NULL). The records and their field lists are
// valid until the next call (their strings stay valid).
func (d *copyDecoder) feed(data []byte, final bool) ([][]*string, error) {
	if d.ended {
		return nil, nil
	}
	d.pending = append(d.pending, data...)
	out := d.out[:0]
	// NB: records are consumed from the front of pending by slicing, and
	// what is left is moved to the front once per call that consumed a
	// record: moving the rest after every record copied a CopyData message
	// once per line in it, and moving an incomplete record on every call
	// copied a long field once per message.
	buf := d.pending
	d.text, d.fields, d.values = "", d.fields[:0], d.values[:0]
	defer func() {
		d.out = out
		if !d.ended && len(d.pending) != len(buf) {
			d.work += int64(len(d.pending))
			d.pending = append(buf[:0], d.pending...)
		}
	}()
	for {
		end, next := d.recordEnd(final)
		if end < 0 {
			if len(d.pending) > copyLineBytesMax {
				return nil, d.errorf(errcode.CopyInvalidValue, "line is longer than %d bytes", copyLineBytesMax)
			}
			return out, nil
		}
		raw := d.pending[:end]
		d.line += int64(bytes.Count(raw, []byte{'\n'})) + 1
		rest := d.pending[next:]
		if len(raw) > 0 && raw[len(raw)-1] == '\r' {
			raw = raw[:len(raw)-1]
		}
		if string(raw) == `\.` {
			d.ended = true
			d.pending = nil
			return out, nil
		}
		if d.spec.header && !d.headerSkipped {
			d.headerSkipped = true
		} else {
			var fields []*string
			var err error
			if d.spec.format == copyCSV {
				fields, err = d.splitCSV(raw)
			} else {
				fields, err = d.splitText(d.recordText(buf, raw), raw)
			}
			if err != nil {
				return nil, err
			}
			out = append(out, fields)
		}
		d.pending = rest
		d.scanned, d.scanInQuote = 0, false
		if len(d.pending) == 0 {
			return out, nil
		}
	}
}

// recordEnd finds the end of the first complete record in pending: the
// index of its terminating newline and where the next record starts; -1 when
// incomplete. At the end of data an unterminated last line is complete.
func (d *copyDecoder) recordEnd(final bool) (int, int) {
	p := d.pending
	if d.spec.format == copyText {
		if i := bytes.IndexByte(p[d.scanned:], '\n'); i >= 0 {
			d.work += int64(i + 1)
			return d.scanned + i, d.scanned + i + 1
		}
		d.work += int64(len(p) - d.scanned)
		d.scanned = len(p)
	} else {
		inQuote := d.scanInQuote
		i := d.scanned
		for ; i < len(p); i++ {
			c := p[i]
			switch {
			case inQuote && c == d.spec.escape && d.spec.escape != d.spec.quote && i+1 < len(p) &&
				(p[i+1] == d.spec.quote || p[i+1] == d.spec.escape):
				i++
			case inQuote && c == d.spec.escape && d.spec.escape != d.spec.quote && i+1 == len(p):
				// An escape as the last byte: whether it escapes depends
				// on the next message; rescan from here then.
				d.work += int64(i - d.scanned)
				d.scanned, d.scanInQuote = i, inQuote
				goto incomplete
			case c == d.spec.quote:
				inQuote = !inQuote
			case c == '\n' && !inQuote:
				d.work += int64(i + 1 - d.scanned)
				return i, i + 1
			}
		}
		d.work += int64(i - d.scanned)
		d.scanned, d.scanInQuote = i, inQuote
	}
incomplete:
	if final && len(p) > 0 {
		return len(p), len(p)
	}
	return -1, -1
}

func (d *copyDecoder) errorf(code *errcode.Code, format string, args ...any) *errcode.Error {
	e := errcode.New(code, format, args...)
	e.Detail = fmt.Sprintf("COPY %s, line %d", d.spec.table, d.line)
	return e
}

// recordText is raw, a record in buf (the pending data at the start of
// this feed call), as a string: a substring of one copy of buf's complete
// lines made at the call's first record, so records share one allocation.
func (d *copyDecoder) recordText(buf, raw []byte) string {
	// NB: raw is a subslice of buf; its offset is where their data starts
	// apart.
	at := cap(buf) - cap(raw)
	if d.text == "" {
		end := bytes.LastIndexByte(buf, '\n')
		if end < at+len(raw) {
			// The last, unterminated line at the end of the data.
			return string(raw)
		}
		d.text, d.textAt = string(buf[at:end+1]), at
	}
	if at < d.textAt || at-d.textAt+len(raw) > len(d.text) {
		return string(raw)
	}
	return d.text[at-d.textAt : at-d.textAt+len(raw)]
}

// slabs returns room for n more fields and values, carved from slabs
// reused from call to call (a full one is replaced, never grown in place:
// earlier records of the call point into it).
func (d *copyDecoder) slabs(n int) ([]*string, []string) {
	if cap(d.fields)-len(d.fields) < n {
		size := max(n, 2*cap(d.fields), 1024)
		d.fields, d.values = make([]*string, 0, size), make([]string, 0, size)
	}
	fields := d.fields[len(d.fields) : len(d.fields) : len(d.fields)+n]
	values := d.values[len(d.values) : len(d.values) : len(d.values)+n]
	d.fields, d.values = d.fields[:len(d.fields)+n], d.values[:len(d.values)+n]
	return fields, values
}

// splitText splits a text-format line (text is line as a string): fields
// separated by the delimiter, backslash escapes, and the null string
// matched before unescaping.
func (d *copyDecoder) splitText(text string, line []byte) ([]*string, error) {
	// Fields are substrings of text, and the field list and values come
	// from the call's slabs.
	n := 1 + bytes.Count(line, []byte{d.spec.delimiter})
	fields, values := d.slabs(n)
	start := 0
	for i := 0; i <= len(text); i++ {
		// NB: a field without a backslash ends at the next delimiter,
		// found with IndexByte instead of byte by byte (once per field:
		// a field with escapes is walked byte by byte).
		if i == start && i < len(text) {
			end := strings.IndexByte(text[i:], d.spec.delimiter)
			if end < 0 {
				end = len(text) - i
			}
			if strings.IndexByte(text[i:i+end], '\\') < 0 {
				i += end
			}
		}
		if i < len(text) && text[i] == '\\' {
			i++
			continue
		}
		if i == len(text) || text[i] == d.spec.delimiter {
			raw := text[start:min(i, len(text))]
			if raw == d.spec.null {
				fields = append(fields, nil)
			} else {
				v, err := unescapeCopyText(raw)
				if err != nil {
					return nil, d.errorf(errcode.CopyInvalidValue, "%v", err)
				}
				if len(values) == cap(values) {
					// An escaped delimiter was counted as a field boundary,
					// so this cannot happen; grow rather than alias.
					values = make([]string, 0, n)
				}
				values = append(values, v)
				fields = append(fields, &values[len(values)-1])
			}
			start = i + 1
		}
	}
	return fields, nil
}

func unescapeCopyText(raw string) (string, error) {
	if !strings.Contains(raw, `\`) {
		return raw, nil
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' || i+1 >= len(raw) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := raw[i]; e {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case 'x':
			n, used := 0, 0
			for used < 2 && i+1 < len(raw) && isHex(raw[i+1]) {
				n = n*16 + hexVal(raw[i+1])
				i++
				used++
			}
			if used == 0 {
				b.WriteByte('x')
			} else {
				b.WriteByte(byte(n))
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := int(e - '0')
			for used := 1; used < 3 && i+1 < len(raw) && raw[i+1] >= '0' && raw[i+1] <= '7'; used++ {
				n = n*8 + int(raw[i+1]-'0')
				i++
			}
			b.WriteByte(byte(n))
		default:
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// splitCSV splits one CSV record: an unquoted field equal to the null string
// is NULL; quoted fields are never NULL.
func (d *copyDecoder) splitCSV(rec []byte) ([]*string, error) {
	var fields []*string
	q, esc, delim := d.spec.quote, d.spec.escape, d.spec.delimiter
	i := 0
	for {
		var b strings.Builder
		quotedAny := false
		var rawUnquoted strings.Builder
		for i < len(rec) && rec[i] != delim {
			if rec[i] == q {
				quotedAny = true
				i++
				for {
					if i >= len(rec) {
						return nil, d.errorf(errcode.CopyInvalidValue, "unterminated CSV quoted field")
					}
					c := rec[i]
					if c == esc && i+1 < len(rec) && (rec[i+1] == q || (esc != q && rec[i+1] == esc)) {
						b.WriteByte(rec[i+1])
						i += 2
						continue
					}
					if c == q {
						i++
						break
					}
					b.WriteByte(c)
					i++
				}
				continue
			}
			b.WriteByte(rec[i])
			rawUnquoted.WriteByte(rec[i])
			i++
		}
		v := b.String()
		if !quotedAny && v == d.spec.null {
			fields = append(fields, nil)
		} else {
			fields = append(fields, &v)
		}
		if i >= len(rec) {
			return fields, nil
		}
		i++ // delimiter
	}
}

// appendCopyText appends one COPY TO text-format field.
func appendCopyTextField(buf []byte, text []byte, delim byte) []byte {
	for _, c := range text {
		switch c {
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\v':
			buf = append(buf, '\\', 'v')
		default:
			if c == delim {
				buf = append(buf, '\\')
			}
			buf = append(buf, c)
		}
	}
	return buf
}

// appendCopyCSVField appends one COPY TO CSV field, quoting when needed (an
// empty string is quoted so that it differs from NULL).
func appendCopyCSVField(buf []byte, text []byte, spec *copySpec) []byte {
	need := len(text) == 0 || string(text) == `\.`
	for _, c := range text {
		if c == spec.delimiter || c == spec.quote || c == '\n' || c == '\r' || c == spec.escape {
			need = true
			break
		}
	}
	if !need {
		return append(buf, text...)
	}
	buf = append(buf, spec.quote)
	for _, c := range text {
		if c == spec.quote || c == spec.escape {
			buf = append(buf, spec.escape)
		}
		buf = append(buf, c)
	}
	return append(buf, spec.quote)
}

// appendCopyRow appends one COPY TO row (text or CSV) with its newline.
func appendCopyRow(buf []byte, row types.Row, cols types.Schema, spec *copySpec, s *Settings) ([]byte, error) {
	for i, v := range row {
		if i > 0 {
			buf = append(buf, spec.delimiter)
		}
		if v == nil {
			buf = append(buf, spec.null...)
			continue
		}
		text, err := appendText(nil, cols[i].Type, v, s)
		if err != nil {
			return nil, err
		}
		if spec.format == copyCSV {
			buf = appendCopyCSVField(buf, text, spec)
		} else {
			buf = appendCopyTextField(buf, text, spec.delimiter)
		}
	}
	return append(buf, '\n'), nil
}
