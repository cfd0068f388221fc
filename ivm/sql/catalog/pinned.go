package catalog

import "slices"

// A materialized view is compiled once, at CREATE, and its state is built
// by that plan; every later compilation of the same view (a restart, a
// shard reopen) must produce the same plan, whatever happened to the
// catalog since. So the view keeps what it was compiled from:
//
//	CREATE MATERIALIZED VIEW m AS SELECT count(*) FROM iv
//	  Recorder{Base: snapshot}   records   m.Refs   = [iv → id 7]
//	                                       m.Pinned = [iv (its SQL then), t (its columns then)]
//	restart: Pinned(snapshot, m)  resolves "iv" → id 7 → the pinned iv,
//	         whatever CREATE OR REPLACE VIEW iv or ALTER VIEW iv RENAME did since
//
// Inline views keep their Refs too (not pins: an inline view is expanded
// with the current definitions of what it reads, as in PostgreSQL), so a
// renamed relation is still found by id.

// ExpansionObserver is implemented by catalogs that follow inline view
// expansion (Recorder): the binder calls EnterView before it binds an
// inline view's body and LeaveView after, so lookups inside the body are
// told apart from the names the statement itself uses.
type ExpansionObserver interface {
	EnterView()
	LeaveView()
}

// WithRefs returns base with the names in refs resolving by id (an inline
// view's or materialized view's own names); other names resolve in base.
func WithRefs(base Catalog, refs []Ref) Catalog {
	if len(refs) == 0 {
		return base
	}
	return refCatalog{base: base, refs: refs}
}

type refCatalog struct {
	base Catalog
	refs []Ref
}

func (c refCatalog) Namespace() NamespaceID { return c.base.Namespace() }

func (c refCatalog) LookupRelation(name []string) (*Relation, bool) {
	for _, r := range c.refs {
		if slices.Equal(r.Name, name) {
			// NB: no fallback to the name: a relation a view reads cannot
			// be dropped while the view exists (DROP refuses), and another
			// relation that took the name since is not the one it meant.
			return c.base.RelationByID(r.ID)
		}
	}
	return c.base.LookupRelation(name)
}

func (c refCatalog) RelationByID(id ID) (*Relation, bool) { return c.base.RelationByID(id) }

func (c refCatalog) EnterView() { enterView(c.base) }

func (c refCatalog) LeaveView() { leaveView(c.base) }

// enterView and leaveView pass inline view expansion on to base, when it
// follows it (a Recorder under a wrapping catalog).
func enterView(base Catalog) {
	if o, ok := base.(ExpansionObserver); ok {
		o.EnterView()
	}
}

func leaveView(base Catalog) {
	if o, ok := base.(ExpansionObserver); ok {
		o.LeaveView()
	}
}

// Pinned returns the catalog a materialized view compiles in after its
// creation: its names resolve through its Refs, and every relation it was
// compiled from resolves to its pinned version.
func Pinned(base Catalog, view *Relation) Catalog {
	if len(view.Pinned) == 0 {
		return WithRefs(base, view.Refs)
	}
	return WithRefs(pinnedCatalog{base: base, pins: view.Pinned}, view.Refs)
}

type pinnedCatalog struct {
	base Catalog
	pins []*Relation
}

func (c pinnedCatalog) Namespace() NamespaceID { return c.base.Namespace() }

func (c pinnedCatalog) pin(id ID) (*Relation, bool) {
	for _, p := range c.pins {
		if p.ID == id {
			return p, true
		}
	}
	return nil, false
}

func (c pinnedCatalog) LookupRelation(name []string) (*Relation, bool) {
	rel, ok := c.base.LookupRelation(name)
	if !ok {
		return nil, false
	}
	if p, pinned := c.pin(rel.ID); pinned {
		return p, true
	}
	return rel, true
}

func (c pinnedCatalog) RelationByID(id ID) (*Relation, bool) {
	if p, ok := c.pin(id); ok {
		return p, true
	}
	return c.base.RelationByID(id)
}

// EnterView implements ExpansionObserver for the base (a Recorder).
func (c pinnedCatalog) EnterView() { enterView(c.base) }

// LeaveView implements ExpansionObserver for the base.
func (c pinnedCatalog) LeaveView() { leaveView(c.base) }

// PinnedRelation returns the version of relation id a materialized view
// was compiled from, if it was pinned.
func (r *Relation) PinnedRelation(id ID) (*Relation, bool) {
	return pinnedCatalog{pins: r.Pinned}.pin(id)
}

// Recorder records what one compilation reads from Base: the names the
// statement itself resolves (Refs, in first-use order) and every relation
// reached at any depth of inline view expansion (Reached, in first-use
// order). Lookups that fail are not recorded.
type Recorder struct {
	Base    Catalog
	Refs    []Ref
	Reached []*Relation
	depth   int
}

// Namespace implements Catalog.
func (c *Recorder) Namespace() NamespaceID { return c.Base.Namespace() }

// LookupRelation implements Catalog.
func (c *Recorder) LookupRelation(name []string) (*Relation, bool) {
	rel, ok := c.Base.LookupRelation(name)
	if !ok {
		return nil, false
	}
	if c.depth == 0 && !slices.ContainsFunc(c.Refs, func(r Ref) bool { return slices.Equal(r.Name, name) }) {
		c.Refs = append(c.Refs, Ref{Name: slices.Clone(name), ID: rel.ID})
	}
	c.reach(rel)
	return rel, true
}

// RelationByID implements Catalog.
func (c *Recorder) RelationByID(id ID) (*Relation, bool) {
	rel, ok := c.Base.RelationByID(id)
	if ok {
		c.reach(rel)
	}
	return rel, ok
}

func (c *Recorder) reach(rel *Relation) {
	for _, r := range c.Reached {
		if r.ID == rel.ID {
			return
		}
	}
	c.Reached = append(c.Reached, rel)
}

// EnterView implements ExpansionObserver.
func (c *Recorder) EnterView() { c.depth++ }

// LeaveView implements ExpansionObserver.
func (c *Recorder) LeaveView() {
	// INVARIANT: the binder pairs every EnterView with a LeaveView.
	if c.depth == 0 {
		panic("catalog: LeaveView without EnterView")
	}
	c.depth--
}

// RefIDs lists the distinct ids of refs, in order.
func RefIDs(refs []Ref) []ID {
	var out []ID
	for _, r := range refs {
		if !slices.Contains(out, r.ID) {
			out = append(out, r.ID)
		}
	}
	return out
}

// BehindInputs reports whether materialized view r was compiled from an
// inline view whose definition changed since (CREATE OR REPLACE VIEW, or
// it was dropped): the view keeps maintaining its pinned definition, and
// ALTER MATERIALIZED VIEW ... RECOMPILE would pick the change up. current
// looks a relation up in today's catalog.
func (r *Relation) BehindInputs(current func(ID) (*Relation, bool)) bool {
	for _, p := range r.Pinned {
		if p.Kind != KindView {
			continue
		}
		now, ok := current(p.ID)
		if !ok || now.SQL != p.SQL || !slices.EqualFunc(now.Refs, p.Refs, func(a, b Ref) bool { return a.ID == b.ID && slices.Equal(a.Name, b.Name) }) {
			return true
		}
	}
	return false
}
