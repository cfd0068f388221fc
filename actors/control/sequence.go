package control

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Sequences (CREATE SEQUENCE, serial, identity) keep their definition in
// the catalog (a relation of KindSequence) and their value here, outside
// any transaction: nextval is never rolled back, as in PostgreSQL.
//
// Durability follows PostgreSQL's log-ahead (SEQ_LOG_VALS): before handing
// out a value that is not yet covered, nextval durably records a value
// seqLogAheadValues steps ahead as the sequence's last value. A crash
// therefore restarts the sequence after every value it may have returned:
// a value is never returned twice (gaps are allowed, as in PostgreSQL).
//
//	state key: 0x01 0x03 ns(16) object(16) → last(int64 BE) called(1 byte)

// seqLogAheadValues is how many values one durable write covers
// (PostgreSQL's SEQ_LOG_VALS). Larger means fewer control-DB writes under
// nextval-heavy load and bigger gaps after a crash. Simulation range: 1..64.
const seqLogAheadValues = 32

const catalogSequenceState byte = 0x03

// SequenceOpKind is what a SequenceOp does.
type SequenceOpKind uint8

// Sequence operations.
const (
	// SeqNextVal is nextval(): advance and return the new value.
	SeqNextVal SequenceOpKind = iota + 1
	// SeqSetVal is setval(seq, Value, IsCalled).
	SeqSetVal
	// SeqRestart is ALTER SEQUENCE ... RESTART [WITH Value] (HasValue).
	SeqRestart
)

type (
	// SequenceOp → SequenceValue. The sequence is named by Name or, when
	// Name is "", by ID.
	SequenceOp struct {
		Name     string
		ID       catalog.ID
		Op       SequenceOpKind
		Value    int64
		HasValue bool
		IsCalled bool
	}
	// SequenceValue answers a SequenceOp.
	SequenceValue struct {
		ID    catalog.ID
		Name  string
		Value int64
	}
	// GetSequenceStates → SequenceStates (pg_sequences, SELECT * FROM seq).
	GetSequenceStates struct{}
	// SequenceStates are the current values of every sequence, by id.
	SequenceStates map[catalog.ID]SequenceState
)

// SequenceState is a sequence's value as pg_sequences and SELECT * FROM seq
// show it.
type SequenceState struct {
	// Last is last_value; Called is is_called (false: the next nextval
	// returns Last itself).
	Last   int64
	Called bool
	// LogCount is log_cnt: values already covered by the durable record.
	LogCount int64
}

// seqState is a sequence's in-memory value.
type seqState struct {
	SequenceState
	// logged reports whether the durable record covers the values up to
	// LogCount steps ahead of Last (false after a restart or setval).
	logged bool
}

func sequenceStateKey(id catalog.ID) []byte {
	k := make([]byte, 0, catalogKeyBytesMax)
	k = append(k, prefixCatalog, catalogSequenceState)
	k = append(k, id.Namespace[:]...)
	return append(k, id.Object[:]...)
}

func encodeSequenceState(last int64, called bool) []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(last))
	if called {
		return append(b, 1)
	}
	return append(b, 0)
}

func decodeSequenceState(v []byte) (int64, bool, error) {
	if len(v) != 9 || v[8] > 1 {
		return 0, false, fmt.Errorf("sequence state has %d bytes", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), v[8] == 1, nil
}

// sequence returns a sequence's state, reading it from the control DB the
// first time.
func (a *Actor) sequence(rel *catalog.Relation) (*seqState, error) {
	if st, ok := a.sequences[rel.ID]; ok {
		return st, nil
	}
	v, ok, err := a.store.Get(sequenceStateKey(rel.ID))
	if err != nil {
		return nil, errcode.Wrap(errcode.InternalError, err, "read sequence %s", rel.Name)
	}
	st := &seqState{SequenceState: SequenceState{Last: rel.Sequence.Start}}
	if ok {
		last, called, err := decodeSequenceState(v)
		if err != nil {
			return nil, errcode.Wrap(CatalogCorrupt, err, "sequence %s", rel.Name)
		}
		st.Last, st.Called = last, called
	}
	// INVARIANT: a stored value lies inside the sequence's bounds (setval
	// and the log-ahead both clamp to them).
	if st.Last < rel.Sequence.Min || st.Last > rel.Sequence.Max {
		return nil, errcode.New(CatalogCorrupt, "sequence %s has value %d outside %d..%d", rel.Name, st.Last, rel.Sequence.Min, rel.Sequence.Max)
	}
	if a.sequences == nil {
		a.sequences = map[catalog.ID]*seqState{}
	}
	a.sequences[rel.ID] = st
	return st, nil
}

// step returns the value after v (wrapping when the sequence cycles); ok
// is false at the end of a non-cycling sequence.
func step(seq *catalog.Sequence, v int64) (int64, bool) {
	if seq.Increment > 0 {
		if v > seq.Max-seq.Increment {
			return seq.Min, seq.Cycle
		}
		return v + seq.Increment, true
	}
	if v < seq.Min-seq.Increment {
		return seq.Max, seq.Cycle
	}
	return v + seq.Increment, true
}

func (a *Actor) sequenceOp(m SequenceOp) (SequenceValue, error) {
	rel, ok := a.snap.byName[m.Name]
	if m.Name == "" {
		rel, ok = a.snap.byID[m.ID]
	}
	name := m.Name
	if ok {
		name = rel.Name
	}
	if !ok {
		if name == "" {
			name = fmt.Sprint(RelationOIDHint(m.ID))
		}
		return SequenceValue{}, errcode.New(errcode.UndefinedObject, "relation \"%s\" does not exist", name)
	}
	if rel.Kind != catalog.KindSequence {
		return SequenceValue{}, errcode.New(errcode.WrongObjectType, "\"%s\" is not a sequence", rel.Name)
	}
	st, err := a.sequence(rel)
	if err != nil {
		return SequenceValue{}, err
	}
	seq := rel.Sequence
	switch m.Op {
	case SeqNextVal:
		v := st.Last
		if st.Called {
			next, ok := step(seq, st.Last)
			if !ok {
				if seq.Increment > 0 {
					return SequenceValue{}, errcode.New(errcode.SequenceLimitReached, "nextval: reached maximum value of sequence \"%s\" (%d)", rel.Name, seq.Max)
				}
				return SequenceValue{}, errcode.New(errcode.SequenceLimitReached, "nextval: reached minimum value of sequence \"%s\" (%d)", rel.Name, seq.Min)
			}
			v = next
		}
		if !st.logged || st.LogCount == 0 {
			// Log ahead: record durably a value covering the next
			// seqLogAheadValues values before returning any of them.
			ahead, n := v, int64(0)
			for n < seqLogAheadValues-1 {
				next, ok := step(seq, ahead)
				if !ok {
					break
				}
				ahead = next
				n++
			}
			if err := a.writeSequence(rel, ahead, true); err != nil {
				return SequenceValue{}, err
			}
			st.logged, st.LogCount = true, n+1
		}
		st.Last, st.Called = v, true
		st.LogCount--
		return SequenceValue{ID: rel.ID, Name: rel.Name, Value: v}, nil
	case SeqSetVal, SeqRestart:
		v, called := m.Value, m.IsCalled
		if m.Op == SeqRestart {
			called = false
			if !m.HasValue {
				v = seq.Start
			}
		}
		if v < seq.Min || v > seq.Max {
			if m.Op == SeqRestart {
				return SequenceValue{}, errcode.New(errcode.SQLInvalidParameterValue, "RESTART value (%d) cannot be %s than %s (%d)", v, lessGreater(v < seq.Min), minMax(v < seq.Min), bound(seq, v < seq.Min)).WithSQLState("22023")
			}
			return SequenceValue{}, errcode.New(errcode.SequenceValueOutOfBounds, "setval: value %d is out of bounds for sequence \"%s\" (%d..%d)", v, rel.Name, seq.Min, seq.Max)
		}
		if err := a.writeSequence(rel, v, called); err != nil {
			return SequenceValue{}, err
		}
		st.Last, st.Called, st.logged, st.LogCount = v, called, false, 0
		return SequenceValue{ID: rel.ID, Name: rel.Name, Value: v}, nil
	}
	panic(fmt.Sprintf("control: unknown sequence op %d", m.Op))
}

func lessGreater(less bool) string {
	if less {
		return "less"
	}
	return "greater"
}

func minMax(less bool) string {
	if less {
		return "MINVALUE"
	}
	return "MAXVALUE"
}

func bound(seq *catalog.Sequence, less bool) int64 {
	if less {
		return seq.Min
	}
	return seq.Max
}

// writeSequence makes a sequence's value durable.
func (a *Actor) writeSequence(rel *catalog.Relation, last int64, called bool) error {
	b := kv.WriteBatch{Ops: []kv.Op{{Key: sequenceStateKey(rel.ID), Value: encodeSequenceState(last, called)}}}
	if err := a.store.Apply(&b); err != nil {
		// NB: the write may or may not have happened; forget the cached
		// state so the next use rereads what is durable.
		delete(a.sequences, rel.ID)
		return errcode.Wrap(errcode.InternalError, err, "write sequence %s", rel.Name)
	}
	return nil
}

// sequenceStates lists every sequence's current value.
func (a *Actor) sequenceStates() (SequenceStates, error) {
	out := SequenceStates{}
	for _, r := range a.snap.Relations() {
		if r.Kind != catalog.KindSequence {
			continue
		}
		st, err := a.sequence(r)
		if err != nil {
			return nil, err
		}
		out[r.ID] = st.SequenceState
	}
	return out, nil
}

// RelationOIDHint renders an id whose relation is unknown for messages.
func RelationOIDHint(id catalog.ID) string { return id.String() }

// ObjectIDOf is the id of object number n in the default namespace (the
// inverse of ObjectNumber), for resolving a regclass oid.
func ObjectIDOf(n uint64) catalog.ID { return objectID(catalog.NamespaceID{}, n) }

// sequenceUsers describes, for DROP SEQUENCE's error, what uses seq.
func sequenceUsers(snap *Snapshot, seq *catalog.Relation) (detail string, users []*catalog.Relation) {
	needle := "'" + strings.ReplaceAll(seq.Key(), "'", "''") + "'::regclass"
	var lines []string
	for _, r := range snap.Dependents(seq.ID) {
		for _, c := range r.Columns {
			if strings.Contains(c.Default, needle) {
				lines = append(lines, fmt.Sprintf("default value for column %s of table %s depends on sequence %s", c.Name, r.Name, seq.Name))
			}
		}
		users = append(users, r)
	}
	return strings.Join(lines, "\n"), users
}

// withoutSequenceDefaults returns table r with the defaults that call seq
// removed (DROP SEQUENCE ... CASCADE drops the defaults, not the table).
func withoutSequenceDefaults(r *catalog.Relation, seq *catalog.Relation) *catalog.Relation {
	needle := "'" + strings.ReplaceAll(seq.Key(), "'", "''") + "'::regclass"
	out := *r
	out.Columns = append([]catalog.Column(nil), r.Columns...)
	for i := range out.Columns {
		if strings.Contains(out.Columns[i].Default, needle) {
			out.Columns[i].Default = ""
			out.Columns[i].Identity = ""
		}
	}
	return &out
}

func without(ids []catalog.ID, id catalog.ID) []catalog.ID {
	var out []catalog.ID
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

// dropSequence drops a sequence. An identity column's sequence cannot be
// dropped; a sequence other tables' defaults call needs CASCADE, which
// drops those defaults (as PostgreSQL does).
func (a *Actor) dropSequence(m DropRelation, rel *catalog.Relation) (DDLResult, error) {
	if seq := rel.Sequence; seq.OwnedBy != (catalog.ID{}) {
		if owner, ok := a.snap.byID[seq.OwnedBy]; ok {
			if i := owner.ColumnIndex(seq.OwnedByColumn); i >= 0 && owner.Columns[i].Identity != "" {
				e := errcode.New(errcode.DependentObjects, "cannot drop sequence %s because column %s of table %s requires it", rel.Name, seq.OwnedByColumn, owner.Name)
				e.Hint = fmt.Sprintf("You can drop table %s instead.", owner.Name)
				return DDLResult{}, e
			}
		}
	}
	detail, users := sequenceUsers(a.snap, rel)
	if len(users) > 0 && !m.Cascade {
		e := errcode.New(errcode.DependentObjects, "cannot drop sequence %s because other objects depend on it", rel.Name).
			WithDetail("%s", detail)
		e.Hint = dropCascadeHint
		return DDLResult{}, e
	}
	next := a.snap.clone()
	var puts []*catalog.Relation
	for _, u := range users {
		changed := withoutSequenceDefaults(u, rel)
		next.put(changed, without(a.snap.deps[u.ID], rel.ID))
		puts = append(puts, changed)
	}
	next.remove(rel.ID)
	notice := ""
	if len(users) > 0 {
		notice = "drop cascades to " + strings.ReplaceAll(detail, " depends on sequence "+rel.Name, "")
	}
	if err := a.commit(next, puts, []*catalog.Relation{rel}); err != nil {
		return DDLResult{}, err
	}
	delete(a.sequences, rel.ID)
	return DDLResult{Version: next.Version, Dropped: []*catalog.Relation{rel}, Notice: notice}, nil
}

// ownedSequences lists the sequences owned by the tables in dropped.
func ownedSequences(snap *Snapshot, dropped []*catalog.Relation) []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range snap.Relations() {
		if r.Kind != catalog.KindSequence || r.Sequence.OwnedBy == (catalog.ID{}) {
			continue
		}
		for _, d := range dropped {
			if d.ID == r.Sequence.OwnedBy {
				out = append(out, r)
				break
			}
		}
	}
	return out
}
