package control

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/runtime"
)

// ActorID is the control actor's id in an embedded process.
const ActorID runtime.ActorID = "control/0"

// Config configures the control actor.
type Config struct {
	// OpenStore opens the control DB (called on Started, so a restart
	// reopens it from durable state only). Apply must be durable on return.
	OpenStore func(ctx runtime.Context) (kv.Store, error)
	// TickEvery is how often the control plane runs its store's background
	// work (stores with a Tick(time.Time) error method); 0 disables it.
	// Simulation range: 1ms..1s.
	TickEvery time.Duration
	// Shards is the number of shards the bucket map places buckets on
	// when the control DB is created (topology.go); 0 means one. A stored
	// map is kept whatever this says. Simulation range: 1 (the shard
	// actors serve one shard until many-shard routing lands).
	Shards int
	// PartitionTables spreads the rows of tables over every shard by
	// their key's bucket when the control DB is created (topology.go);
	// a stored choice is kept whatever this says.
	PartitionTables bool
}

// storageTick runs the store's background work.
type storageTick struct{}

// Messages the control actor answers (all via Ask; the reply is the listed
// type or an error).
type (
	// CreateRelation → DDLResult. Relation.ID must be zero (allocated here).
	CreateRelation struct {
		Relation *catalog.Relation
		// Deps are the relations a view reads (for DROP RESTRICT/CASCADE).
		Deps        []catalog.ID
		IfNotExists bool
		// OrReplace replaces an existing relation of the same name and kind
		// keeping its id (CREATE OR REPLACE VIEW).
		OrReplace bool
		// Sequences are created in the same catalog change, owned by the
		// new table (serial and identity columns); the table depends on
		// them. Their ids must be zero.
		Sequences []*catalog.Relation
		// Subsources are the mirrored tables of a change-data-capture
		// source, created in the same catalog change as the source (so a
		// crash never leaves half a source): each gets Upstream.Source set
		// to the new source and depends on it, so DROP SOURCE ... CASCADE
		// drops them (and the views over them). Their ids must be zero.
		Subsources []*catalog.Relation
	}
	// DropRelation → DDLResult.
	DropRelation struct {
		Name     string
		Kind     catalog.Kind
		IfExists bool
		Cascade  bool
	}
	// AddColumn → DDLResult (ALTER TABLE ... ADD COLUMN).
	AddColumn struct {
		Table       string
		Column      catalog.Column
		IfNotExists bool
	}
	// DDLResult reports a catalog change.
	DDLResult struct {
		// Version is the catalog version after the statement (the
		// contents: GetSnapshot).
		Version uint64
		// Changed is the created/altered relation (nil for drops or no-ops).
		Changed *catalog.Relation
		// Dropped lists dropped relations, dependents first.
		Dropped []*catalog.Relation
		// Notice is a PostgreSQL-style NOTICE (e.g. "relation already exists,
		// skipping"), "" if none.
		Notice string
	}
)

// Actor is the control-plane actor.
type Actor struct {
	cfg   Config
	store kv.Store
	snap  *Snapshot
	// loadErr is a catalog load failure: every request answers it, so the
	// process stays up and says what is wrong instead of crashing.
	loadErr error
	// sequences caches sequence values (sequence.go), loaded on first use.
	sequences map[catalog.ID]*seqState
	// roles are every role by name (roles.go), loaded at start;
	// nextRoleOID is the OID the next created role gets.
	roles       map[string]Role
	nextRoleOID int64
	// epochs hands out global epochs (epochs.go).
	epochs epochAllocator
}

// New returns a control actor factory.
func New(cfg Config) runtime.Factory {
	return func() runtime.Actor { return &Actor{cfg: cfg} }
}

// Receive implements runtime.Actor.
func (a *Actor) Receive(ctx runtime.Context, msg runtime.Message) {
	switch msg.(type) {
	case runtime.Started:
		a.loadErr = a.load(ctx)
		if a.loadErr != nil {
			ctx.Logger().Error("catalog load failed", "err", a.loadErr)
		}
		return
	case runtime.Stopping:
		return
	case storageTick:
		if t, ok := a.store.(interface{ Tick(time.Time) error }); ok {
			if err := t.Tick(ctx.Now()); err != nil {
				if errcode.Has(err, errcode.ShardFenceLost) {
					// Terminal: one log line, no more ticks.
					a.noteFenced(err)
					ctx.Logger().Error("control DB fenced by a newer writer; the catalog is no longer served", "err", err)
					return
				}
				ctx.Logger().Error("storage background work failed", "err", err)
			}
		}
		ctx.After(a.cfg.TickEvery, storageTick{})
		return
	}
	if a.loadErr != nil && a.store == nil {
		// The control DB did not open (a transient store fault at start):
		// each request tries again, instead of the process answering the
		// fault until it restarts.
		if a.loadErr = a.load(ctx); a.loadErr != nil {
			ctx.Logger().Error("catalog load failed", "err", a.loadErr)
		}
	}
	if a.loadErr != nil {
		ctx.Reply(a.loadErr)
		return
	}
	switch m := msg.(type) {
	case GetSnapshot:
		if m.Known != 0 && m.Known == a.snap.Version {
			ctx.Reply(SnapshotUnchanged{Version: a.snap.Version})
			return
		}
		ctx.Reply(a.snap.Value())
	case CreateRelation:
		ctx.Reply(a.replyOf(a.create(m)))
	case DropRelation:
		ctx.Reply(a.replyOf(a.drop(m)))
	case DropSchema:
		ctx.Reply(a.replyOf(a.dropSchema(m)))
	case AddColumn:
		ctx.Reply(a.replyOf(a.addColumn(m)))
	case CreateIndex:
		ctx.Reply(a.replyOf(a.createIndex(m)))
	case RenameRelation:
		ctx.Reply(a.replyOf(a.rename(m)))
	case SetViewOptions:
		ctx.Reply(a.replyOf(a.setViewOptions(m)))
	case SetLateRows:
		ctx.Reply(a.replyOf(a.setLateRows(m)))
	case RecompileView:
		ctx.Reply(a.replyOf(a.recompile(m)))
	case SetPrimaryKey:
		ctx.Reply(a.replyOf(a.setPrimaryKey(m)))
	case SequenceOp:
		v, err := a.sequenceOp(m)
		if err != nil {
			a.noteFenced(err)
			ctx.Reply(err)
			return
		}
		ctx.Reply(v)
	case GetEpochs:
		v, err := a.knownEpoch()
		if err != nil {
			a.noteFenced(err)
			ctx.Reply(err)
			return
		}
		ctx.Reply(v)
	case AllocEpoch:
		v, err := a.allocEpoch(m)
		if err != nil {
			a.noteFenced(err)
			ctx.Reply(err)
			return
		}
		ctx.Reply(v)
	case GetSequenceStates:
		v, err := a.sequenceStates()
		if err != nil {
			a.noteFenced(err)
			ctx.Reply(err)
			return
		}
		ctx.Reply(v)
	default:
		if reply, ok := a.receiveRole(msg); ok {
			ctx.Reply(reply)
			return
		}
		panic(fmt.Sprintf("control: unexpected message %T", msg))
	}
}

func (a *Actor) replyOf(r DDLResult, err error) runtime.Message {
	if err != nil {
		a.noteFenced(err)
		return err
	}
	return r
}

// noteFenced makes a fence terminal: a newer writer owns the control DB (an
// operator's takeover), so every later request answers the fence instead of
// failing in ways that look like bugs, and the catalog in memory, which may
// be ahead of what this writer made durable, is never served again.
func (a *Actor) noteFenced(err error) {
	if a.loadErr == nil && errcode.Has(err, errcode.ShardFenceLost) {
		a.loadErr = errcode.Wrap(errcode.ShardFenceLost, err, "the control DB is owned by a newer writer; this server stopped serving the catalog")
		a.snap = nil
	}
}

// load reads the default namespace's catalog from the control DB.
func (a *Actor) load(ctx runtime.Context) error {
	store, err := a.cfg.OpenStore(ctx)
	if err != nil {
		if e, ok := errcode.StorageIntegrityError(err); ok {
			return e // damaged, not a bug: the error names the object
		}
		return errcode.Wrap(errcode.InternalError, err, "open control DB")
	}
	a.store = store
	if _, ok := store.(interface{ Tick(time.Time) error }); ok && a.cfg.TickEvery > 0 {
		ctx.After(a.cfg.TickEvery, storageTick{})
	}
	var ns catalog.NamespaceID
	snap := newSnapshot(ns)
	if snap.partitioned, err = loadPartitioned(ctx, store, a.cfg.PartitionTables); err != nil {
		return err
	}
	if snap.bucketMap, err = loadBucketMap(ctx, store, a.cfg.Shards, snap.partitioned); err != nil {
		return err
	}
	if v, ok, err := store.Get(nextIDKey(ns)); err != nil {
		return err
	} else if ok {
		n, err := decodeUint64(v)
		if err != nil {
			return errcode.Wrap(CatalogCorrupt, err, "catalog next-id counter")
		}
		snap.NextObject = n
	}
	// NB: without the stored version a restarted control plane would
	// publish versions from 0 again, and a shard holding a newer-numbered
	// snapshot from before the restart would ignore its DDL (found by
	// sim/system: a view created after a restart was dropped and
	// backfilled twice).
	if v, ok, err := store.Get(versionKey(ns)); err != nil {
		return err
	} else if ok {
		if snap.Version, err = decodeUint64(v); err != nil {
			return errcode.Wrap(CatalogCorrupt, err, "catalog version")
		}
	}
	for _, kind := range []byte{catalogTable, catalogView} {
		err := kv.ScanPrefix(store, namespacePrefix(kind, ns), func(k, v []byte) error {
			rel, deps, err := decodeRecord(k, v)
			if err != nil {
				return err
			}
			// INVARIANT: every stored id is below the stored counter.
			if ObjectNumber(rel.ID) >= snap.NextObject {
				return errcode.New(CatalogCorrupt, "relation %s has id %d at or above the next-id counter %d", rel.Name, ObjectNumber(rel.ID), snap.NextObject)
			}
			snap.put(rel, deps)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := a.loadRoles(); err != nil {
		return err
	}
	a.snap = snap
	return nil
}

// commit writes the changes durably, then publishes next.
func (a *Actor) commit(next *Snapshot, puts []*catalog.Relation, deletes []*catalog.Relation) error {
	var b kv.WriteBatch
	for _, r := range puts {
		v, err := encodeRecord(r, next.deps[r.ID])
		if err != nil {
			return errcode.Internal(err)
		}
		b.Ops = append(b.Ops, kv.Op{Key: relationKey(r), Value: v})
	}
	for _, r := range deletes {
		b.Ops = append(b.Ops, kv.Op{Key: relationKey(r), Delete: true})
		if r.Kind == catalog.KindSequence {
			b.Ops = append(b.Ops, kv.Op{Key: sequenceStateKey(r.ID), Delete: true})
		}
	}
	b.Ops = append(b.Ops, kv.Op{Key: nextIDKey(next.namespace), Value: encodeUint64(next.NextObject)})
	b.Ops = append(b.Ops, kv.Op{Key: versionKey(next.namespace), Value: encodeUint64(next.Version)})
	sortOps(b.Ops)
	if err := a.store.Apply(&b); err != nil {
		return errcode.Wrap(errcode.InternalError, err, "write catalog")
	}
	a.snap = next
	return nil
}

func (a *Actor) create(m CreateRelation) (DDLResult, error) {
	rel := m.Relation
	if rel == nil || rel.ID != (catalog.ID{}) {
		panic("control: CreateRelation needs a relation without id")
	}
	if rel.Kind == catalog.KindSchema {
		return a.createSchema(m)
	}
	if _, ok := a.snap.Schema(rel.SchemaName()); !ok {
		return DDLResult{}, schemaNotFound(rel.Schema)
	}
	if old, ok := a.snap.byName[rel.Key()]; ok {
		switch {
		case m.OrReplace && old.Kind == rel.Kind:
			if err := a.checkReplaceView(old, rel, m.Deps); err != nil {
				return DDLResult{}, err
			}
			next := a.snap.clone()
			replaced := *rel
			replaced.ID = old.ID
			next.put(&replaced, m.Deps)
			if err := a.commit(next, []*catalog.Relation{&replaced}, nil); err != nil {
				return DDLResult{}, err
			}
			return DDLResult{Version: next.Version, Changed: &replaced}, nil
		case m.IfNotExists:
			return DDLResult{Version: a.snap.Version, Notice: fmt.Sprintf("relation %q already exists, skipping", rel.Name)}, nil
		default:
			return DDLResult{}, errcode.New(errcode.DuplicateObject, "relation %q already exists", rel.Name)
		}
	}
	// A primary key's index is a relation in PostgreSQL: its name is
	// taken too, and a new table's key must not take an index's name.
	if _, ok := a.primaryKeyIndexOwner(rel.Key()); ok {
		if m.IfNotExists {
			return DDLResult{Version: a.snap.Version, Notice: fmt.Sprintf("relation %q already exists, skipping", rel.Name)}, nil
		}
		return DDLResult{}, errcode.New(errcode.DuplicateObject, "relation %q already exists", rel.Name)
	}
	if err := a.checkLateRows(rel); err != nil {
		return DDLResult{}, err
	}
	next := a.snap.clone()
	created := *rel
	if len(rel.PrimaryKey) > 0 && rel.PrimaryKeyName == "" && a.relationNameTaken(catalog.Key(rel.Schema, rel.PrimaryKeyConstraint())) {
		// PostgreSQL's ChooseConstraintName: t_pkey1, t_pkey2, ...
		for n := 1; ; n++ {
			if name := makeObjectName(rel.Name, "", "pkey"+strconv.Itoa(n)); !a.relationNameTaken(catalog.Key(rel.Schema, name)) {
				created.PrimaryKeyName = name
				break
			}
		}
	}
	created.ID = objectID(next.namespace, next.NextObject)
	next.NextObject++
	if created.Kind == catalog.KindTable {
		created.Placement = 0
	}
	if a.snap.partitioned && created.Kind == catalog.KindTable && (len(created.PrimaryKey) > 0 || created.InsertOnly) && created.Watermark == nil {
		// Its rows go to the shard owning their key's bucket, or an
		// insert-only table's to the owner of their value's (never
		// deleted, so never looked for). Tables without a key that take
		// deletes by value, and tables with a watermark (whose late rows
		// are judged in commit order), stay on the first shard.
		created.Placement = catalog.PlacementSpread
	}
	puts := []*catalog.Relation{&created}
	deps := append([]catalog.ID(nil), m.Deps...)
	for _, s := range m.Sequences {
		if s.ID != (catalog.ID{}) || s.Kind != catalog.KindSequence || s.Sequence == nil {
			panic("control: CreateRelation.Sequences needs sequences without id")
		}
		if _, ok := next.byName[s.Key()]; ok {
			return DDLResult{}, errcode.New(errcode.DuplicateObject, "relation %q already exists", s.Name)
		}
		seq := *s
		def := *s.Sequence
		def.OwnedBy = created.ID
		seq.Sequence = &def
		seq.ID = objectID(next.namespace, next.NextObject)
		next.NextObject++
		next.put(&seq, nil)
		puts = append(puts, &seq)
		deps = append(deps, seq.ID)
	}
	next.put(&created, deps)
	for _, sub := range m.Subsources {
		if sub.ID != (catalog.ID{}) || sub.Kind != catalog.KindSource || sub.Upstream == nil || created.Kind != catalog.KindSource {
			panic("control: CreateRelation.Subsources needs mirrored sources without id under a source")
		}
		if _, ok := next.byName[sub.Key()]; ok {
			return DDLResult{}, errcode.New(errcode.DuplicateObject, "relation %q already exists", sub.Name).
				WithDetail("the upstream table %s.%s is mirrored under that name", sub.Upstream.Schema, sub.Upstream.Table)
		}
		mirror := *sub
		up := *sub.Upstream
		up.Source = created.ID
		mirror.Upstream = &up
		mirror.ID = objectID(next.namespace, next.NextObject)
		next.NextObject++
		next.put(&mirror, []catalog.ID{created.ID})
		puts = append(puts, &mirror)
	}
	if err := a.commit(next, puts, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: &created}, nil
}

func (a *Actor) drop(m DropRelation) (DDLResult, error) {
	rel, ok := a.snap.byName[m.Name]
	if !ok {
		if t, ok := a.primaryKeyIndexOwner(m.Name); ok && m.Kind == catalog.KindIndex {
			e := errcode.New(errcode.DependentObjects, "cannot drop index %s because constraint %s on table %s requires it", m.Name, m.Name, t.Name)
			e.Hint = fmt.Sprintf("You can drop constraint %s on table %s instead.", m.Name, t.Name)
			return DDLResult{}, e
		}
		if m.IfExists {
			return DDLResult{Version: a.snap.Version, Notice: fmt.Sprintf("%s %q does not exist, skipping", kindWord(m.Kind), m.Name)}, nil
		}
		e := errcode.New(errcode.UndefinedObject, "%s %q does not exist", kindWord(m.Kind), m.Name)
		if m.Kind == catalog.KindIndex {
			e = e.WithSQLState("42704") // undefined_object: PostgreSQL's code for an index
		}
		return DDLResult{}, e
	}
	if rel.Kind != m.Kind {
		return DDLResult{}, errcode.New(errcode.WrongObjectType, "%q is not %s", m.Name, withArticle(kindWord(m.Kind))).
			WithDetail("%q is %s", m.Name, withArticle(kindWord(rel.Kind)))
	}
	if rel.Kind == catalog.KindSequence {
		return a.dropSequence(m, rel)
	}
	if rel.Upstream != nil {
		if src, ok := a.snap.byID[rel.Upstream.Source]; ok {
			e := errcode.New(errcode.DependentObjects, "cannot drop source %q because source %q mirrors it", rel.Name, src.Name)
			e.Hint = fmt.Sprintf("DROP SOURCE %s CASCADE drops the source with every table it mirrors.", src.Name)
			return DDLResult{}, e
		}
	}
	order, edges := a.dependentClosure(rel)
	if err := a.checkDropLateRows(order); err != nil {
		return DDLResult{}, err
	}
	if len(edges) > 0 && !m.Cascade {
		return DDLResult{}, dependentsError(rel, edges)
	}
	notice := cascadeNotice(edges)
	// Sequences owned by dropped tables (serial, identity, OWNED BY) go
	// with them.
	order = append(order, ownedSequences(a.snap, order)...)
	// So do their indexes.
	order = append(order, ownedIndexes(a.snap, order)...)
	next := a.snap.clone()
	for _, r := range order {
		next.remove(r.ID)
		delete(a.sequences, r.ID)
	}
	if err := a.commit(next, nil, order); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Dropped: order, Notice: notice}, nil
}

func (a *Actor) addColumn(m AddColumn) (DDLResult, error) {
	rel, err := a.table(m.Table)
	if err != nil {
		return DDLResult{}, err
	}
	if rel.ColumnIndex(m.Column.Name) >= 0 {
		if m.IfNotExists {
			return DDLResult{Version: a.snap.Version, Notice: fmt.Sprintf("column %q of relation %q already exists, skipping", m.Column.Name, m.Table)}, nil
		}
		return DDLResult{}, errcode.New(errcode.DuplicateObject, "column %q of relation %q already exists", m.Column.Name, m.Table).WithSQLState("42701")
	}
	if err := a.checkAlterLateRows(rel, "add a column to"); err != nil {
		return DDLResult{}, err
	}
	if m.Column.NotNull && m.Column.Default == "" {
		return DDLResult{}, errcode.New(errcode.IncompatibleEvolution, "column %q is NOT NULL without a DEFAULT", m.Column.Name)
	}
	altered := *rel
	altered.Columns = append(append([]catalog.Column(nil), rel.Columns...), m.Column)
	next := a.snap.clone()
	next.put(&altered, a.snap.deps[rel.ID])
	if err := a.commit(next, []*catalog.Relation{&altered}, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: &altered}, nil
}

// kindWord names a relation kind in messages ("relation" when a statement
// did not say which kind it meant).
func kindWord(k catalog.Kind) string {
	if k == 0 {
		return "relation"
	}
	return k.String()
}

// table is the table named name, or the error an ALTER TABLE of something
// else gets (42P01 / 42809).
func (a *Actor) table(name string) (*catalog.Relation, error) {
	rel, ok := a.snap.byName[name]
	if !ok {
		return nil, errcode.New(errcode.UndefinedObject, "relation %q does not exist", name)
	}
	if rel.Kind != catalog.KindTable {
		return nil, errcode.New(errcode.WrongObjectType, "%q is not a table", name)
	}
	return rel, nil
}

// withArticle puts "a" or "an" before a kind word ("an index").
func withArticle(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}
