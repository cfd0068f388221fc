package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/actors/control"
	sessionactor "github.com/rockstream/rockstream/actors/session"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/expr"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/ivm/sql/ddl"
	"github.com/rockstream/rockstream/ivm/types"
	"github.com/rockstream/rockstream/ivm/zset"
	"github.com/rockstream/rockstream/syscat"
)

// sessionSequences implements expr.Sequences for one statement: every
// nextval/setval is a request to the control plane (durable, outside the
// transaction, as in PostgreSQL) through the session actor, which
// remembers the values currval and lastval answer.
type sessionSequences struct {
	s   *session
	ctx context.Context
}

func (s *session) sequences(ctx context.Context) expr.Sequences {
	return &sessionSequences{s: s, ctx: ctx}
}

// op runs one sequence operation and remembers the value for currval.
func (q *sessionSequences) op(ref expr.SequenceRef, m control.SequenceOp) (int64, error) {
	if ref.Name != "" {
		snap, err := q.s.e.snapshot(q.ctx)
		if err != nil {
			return 0, err
		}
		m.Name = q.s.relationKey(snap, ref.Name)
		if _, ok := snap.LookupRelation([]string{m.Name}); !ok {
			return 0, errcode.New(errcode.UndefinedObject, "relation \"%s\" does not exist", strings.Join(splitQualified(ref.Name), "."))
		}
	} else {
		m.ID = sequenceIDOf(ref.OID)
	}
	reply, err := q.s.req(q.ctx, sessionactor.SequenceOp{Op: m})
	if err != nil {
		return 0, err
	}
	return reply.(control.SequenceValue).Value, nil
}

// relationKey resolves a relation name written as regclass input is
// (nextval('s.seq'), pg_get_serial_sequence('t', 'c')): identifiers
// case-folded unless quoted, a qualified name in its schema, an
// unqualified one through the session's search_path; the result is the
// relation's catalog.Key.
func (s *session) relationKey(snap *control.Snapshot, lit string) string {
	parts := splitQualified(lit)
	if len(parts) == 2 {
		return catalog.Key(parts[0], parts[1])
	}
	key, err := s.resolveExisting(snap, parts[len(parts)-1])
	if err != nil {
		return parts[len(parts)-1]
	}
	return key
}

// splitQualified splits a possibly qualified, possibly quoted name
// (`"My"."Seq"`, `s.seq`, `Seq`) into its folded parts.
func splitQualified(lit string) []string {
	var parts []string
	var cur strings.Builder
	inQuote, quoted := false, false
	for i := 0; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c == '"' && inQuote && i+1 < len(lit) && lit[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			inQuote, quoted = !inQuote, true
		case c == '.' && !inQuote:
			parts = append(parts, foldPart(cur.String(), quoted))
			cur.Reset()
			quoted = false
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, foldPart(cur.String(), quoted))
}

func foldPart(p string, quoted bool) string {
	if quoted {
		return p
	}
	return strings.ToLower(strings.TrimSpace(p))
}

func (q *sessionSequences) NextVal(ref expr.SequenceRef) (int64, error) {
	return q.op(ref, control.SequenceOp{Op: control.SeqNextVal})
}

func (q *sessionSequences) SetVal(ref expr.SequenceRef, v int64, isCalled bool) (int64, error) {
	return q.op(ref, control.SequenceOp{Op: control.SeqSetVal, Value: v, IsCalled: isCalled})
}

func (q *sessionSequences) CurrVal(ref expr.SequenceRef) (int64, error) {
	snap, err := q.s.e.snapshot(q.ctx)
	if err != nil {
		return 0, err
	}
	rel, err := q.resolve(snap, ref)
	if err != nil {
		return 0, err
	}
	reply, err := q.s.req(q.ctx, sessionactor.CurrVal{ID: rel.ID})
	if err != nil {
		return 0, err
	}
	cur := reply.(sessionactor.SequenceCurrent)
	if !cur.Defined {
		return 0, errcode.New(errcode.SequenceNotYetDefined, "currval of sequence \"%s\" is not yet defined in this session", rel.Name)
	}
	return cur.Value, nil
}

func (q *sessionSequences) LastVal() (int64, error) {
	reply, err := q.s.req(q.ctx, sessionactor.LastVal{})
	if err != nil {
		return 0, err
	}
	cur := reply.(sessionactor.SequenceCurrent)
	if !cur.Defined {
		return 0, errcode.New(errcode.SequenceNotYetDefined, "lastval is not yet defined in this session")
	}
	return cur.Value, nil
}

func (q *sessionSequences) resolve(snap *control.Snapshot, ref expr.SequenceRef) (*catalog.Relation, error) {
	var rel *catalog.Relation
	var ok bool
	name := ref.Name
	if name != "" {
		rel, ok = snap.LookupRelation([]string{q.s.relationKey(snap, name)})
	} else {
		name = fmt.Sprint(ref.OID)
		rel, ok = snap.RelationByID(sequenceIDOf(ref.OID))
	}
	if !ok {
		return nil, errcode.New(errcode.UndefinedObject, "relation \"%s\" does not exist", name)
	}
	if rel.Kind != catalog.KindSequence {
		return nil, errcode.New(errcode.WrongObjectType, "\"%s\" is not a sequence", rel.Name)
	}
	return rel, nil
}

// sequenceRows is what SELECT * FROM seq reads: one row (last_value,
// log_cnt, is_called).
func (s *session) sequenceRows(ctx context.Context, rels []*catalog.Relation) (map[catalog.ID]zset.Batch, error) {
	m, err := s.e.ask(ctx, control.ActorID, control.GetSequenceStates{})
	if err != nil {
		return nil, err
	}
	states := m.(control.SequenceStates)
	out := map[catalog.ID]zset.Batch{}
	for _, r := range rels {
		st := states[r.ID]
		var b zset.Batch
		b.Add(types.Row{st.Last, st.LogCount, st.Called}, 1)
		out[r.ID] = b
	}
	return out, nil
}

// sequenceRelation builds the catalog relation of a sequence.
func sequenceRelation(name string, seq catalog.Sequence) *catalog.Relation {
	return &catalog.Relation{Kind: catalog.KindSequence, Name: name, Columns: catalog.SequenceColumns(), Sequence: &seq}
}

// createTableSequences names the sequences of a CREATE TABLE's serial and
// identity columns as PostgreSQL does (<table>_<column>_seq, then a number
// until the name is free) and points each column's default at its
// sequence. It also checks that the sequences DEFAULT expressions call
// exist, returning them as dependencies.
func (s *session) createTableSequences(snap *control.Snapshot, st *ddl.CreateTable, schema string, cols []catalog.Column) ([]*catalog.Relation, []catalog.ID, error) {
	var seqs []*catalog.Relation
	taken := map[string]bool{}
	for _, cs := range st.Sequences {
		col := &cols[cs.Column]
		base := st.Name + "_" + col.Name + "_seq"
		name := base
		for n := 1; ; n++ {
			if _, exists := snap.LookupRelation([]string{catalog.Key(schema, name)}); !exists && !taken[name] {
				break
			}
			name = fmt.Sprintf("%s%d", base, n)
		}
		taken[name] = true
		def := cs.Sequence
		def.OwnedByColumn = col.Name
		seq := sequenceRelation(name, def)
		seq.Schema = schema
		seqs = append(seqs, seq)
		col.Default = "nextval('" + strings.ReplaceAll(catalog.Key(schema, name), "'", "''") + "'::regclass)"
	}
	var deps []catalog.ID
	for _, ref := range st.SequenceRefs {
		rel, ok := snap.LookupRelation([]string{s.relationKey(snap, ref)})
		if !ok {
			return nil, nil, errcode.New(errcode.UndefinedObject, "relation \"%s\" does not exist", ref)
		}
		if rel.Kind != catalog.KindSequence {
			return nil, nil, errcode.New(errcode.WrongObjectType, "\"%s\" is not a sequence", ref)
		}
		deps = append(deps, rel.ID)
	}
	return seqs, deps, nil
}

// sequenceDDL runs CREATE SEQUENCE and ALTER SEQUENCE.
func (s *session) sequenceDDL(ctx context.Context, snap *control.Snapshot, d ddl.Statement, schema string) (control.DDLResult, error) {
	switch st := d.(type) {
	case *ddl.CreateSequence:
		seq := st.Sequence
		if st.OwnedByTable != "" {
			t, ok := snap.LookupRelation([]string{st.OwnedByTable})
			if !ok {
				return control.DDLResult{}, errcode.New(errcode.UndefinedObject, "relation \"%s\" does not exist", st.OwnedByTable)
			}
			if t.Kind != catalog.KindTable {
				return control.DDLResult{}, errcode.New(errcode.WrongObjectType, "sequence cannot be owned by relation \"%s\"", t.Name).
					WithDetail("%s is a %s", t.Name, t.Kind)
			}
			if t.ColumnIndex(st.OwnedByColumn) < 0 {
				return control.DDLResult{}, errcode.New(errcode.UndefinedColumnCode, "column \"%s\" of relation \"%s\" does not exist", st.OwnedByColumn, t.Name)
			}
			seq.OwnedBy, seq.OwnedByColumn = t.ID, st.OwnedByColumn
		}
		rel := sequenceRelation(st.Name, seq)
		rel.Schema = schema
		return s.control(ctx, control.CreateRelation{Relation: rel, IfNotExists: st.IfNotExists})
	case *ddl.AlterSequence:
		m := control.SequenceOp{Name: st.Name, Op: control.SeqRestart}
		if st.Restart != nil {
			m.Value, m.HasValue = *st.Restart, true
		}
		if _, err := s.e.ask(ctx, control.ActorID, m); err != nil {
			if e, ok := errcode.As(err); ok && st.IfExists && e.Code == errcode.UndefinedObject {
				return control.DDLResult{Notice: fmt.Sprintf("relation \"%s\" does not exist, skipping", st.Name)}, nil
			}
			return control.DDLResult{}, err
		}
		return control.DDLResult{}, nil
	}
	panic(fmt.Sprintf("engine: sequenceDDL of %T", d))
}

// sequenceIDOf maps a user relation's regclass oid back to its id (the
// inverse of syscat.RelationOID for user objects).
func sequenceIDOf(oid int64) catalog.ID {
	base := syscat.RelationOID(control.ObjectIDOf(syscat.FirstUserObject))
	if oid < base {
		return catalog.ID{}
	}
	return control.ObjectIDOf(uint64(oid-base) + syscat.FirstUserObject)
}

// SerialSequence implements expr.Sequences: the sequence owned by
// table.column (serial, identity, OWNED BY), as public.name.
func (q *sessionSequences) SerialSequence(table, column string) (string, bool, error) {
	snap, err := q.s.e.snapshot(q.ctx)
	if err != nil {
		return "", false, err
	}
	t, ok := snap.LookupRelation([]string{q.s.relationKey(snap, table)})
	if !ok {
		return "", false, errcode.New(errcode.UndefinedObject, "relation \"%s\" does not exist", table)
	}
	if t.ColumnIndex(column) < 0 {
		return "", false, errcode.New(errcode.UndefinedColumnCode, "column \"%s\" of relation \"%s\" does not exist", column, t.Name)
	}
	for _, r := range snap.Relations() {
		if r.Kind == catalog.KindSequence && r.Sequence.OwnedBy == t.ID && r.Sequence.OwnedByColumn == column {
			return r.SchemaName() + "." + r.Name, true, nil
		}
	}
	return "", false, nil
}
