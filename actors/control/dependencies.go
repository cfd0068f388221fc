package control

import (
	"fmt"
	"strings"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Dependencies between relations: a view or materialized view depends on
// the relations its SQL names directly (Relation.Refs, stored as the
// record's deps), a table on the sequences its defaults call. DROP refuses
// a relation with dependents unless CASCADE, and CREATE OR REPLACE VIEW
// refuses a definition that would make a view read itself.
//
//	t ◄── a1 ◄── b1 ◄── c1        DROP TABLE t: 2BP01, detail in the order
//	       ▲                        PostgreSQL prints it (depth first):
//	       └──── m                  view a1 depends on table t
//	                                view b1 depends on view a1
//	                                view c1 depends on view b1
//	                                materialized view m depends on view a1

// Messages for the dependency-aware DDL (Ask; the reply is DDLResult or an
// error).
type (
	// RenameRelation is ALTER {TABLE | VIEW | MATERIALIZED VIEW} name
	// RENAME TO new_name. Dependents keep working: they reference what
	// they read by id.
	RenameRelation struct {
		Name, NewName string
		Kind          catalog.Kind
		IfExists      bool
	}
	// SetViewOptions changes a materialized view's options (ALTER
	// MATERIALIZED VIEW ... SET / RESET (...)): its RetainHistory and
	// FreshnessTarget. The
	// shard adopts the new record at its next catalog sync; the view's
	// state is kept.
	SetViewOptions struct {
		Name            string
		RetainHistory   time.Duration
		FreshnessTarget time.Duration
	}
	// RecompileView replaces a materialized view's pinned plan (ALTER
	// MATERIALIZED VIEW ... RECOMPILE): Relation has the view's id and its
	// new Refs and Pinned; the control plane bumps its Plan, so the shard
	// rebuilds its state from its inputs.
	RecompileView struct {
		Relation *catalog.Relation
		// Deps are the relations the new plan's SQL names directly.
		Deps []catalog.ID
	}
)

// dependencyEdge is one line of a DROP's detail: obj depends on on.
type dependencyEdge struct{ obj, on *catalog.Relation }

// dependentClosure returns rel and everything that depends on it,
// directly or not: order lists them dependents first (the order to drop
// them in), edges each dependent once with the relation through which it
// was found, depth first in creation order, as PostgreSQL reports them.
func (a *Actor) dependentClosure(rel *catalog.Relation) (order []*catalog.Relation, edges []dependencyEdge) {
	seen := map[catalog.ID]bool{}
	var visit func(r *catalog.Relation)
	visit = func(r *catalog.Relation) {
		seen[r.ID] = true
		for _, d := range a.snap.Dependents(r.ID) {
			if !seen[d.ID] {
				edges = append(edges, dependencyEdge{obj: d, on: r})
				visit(d)
			}
		}
		order = append(order, r)
	}
	visit(rel)
	return order, edges
}

// dependentsError is PostgreSQL's refusal to drop rel without CASCADE.
func dependentsError(rel *catalog.Relation, edges []dependencyEdge) *errcode.Error {
	code := errcode.DependentObjects
	lines := make([]string, len(edges))
	for i, e := range edges {
		lines[i] = fmt.Sprintf("%s %s depends on %s %s", e.obj.Kind, e.obj.Name, e.on.Kind, e.on.Name)
		if e.obj.Kind == catalog.KindView {
			// Spec §4.3: an inline view is expanded where it is used, so
			// dropping what it reads would break it only later.
			code = errcode.DependentInlineView
		}
	}
	err := errcode.New(code, "cannot drop %s %s because other objects depend on it", rel.Kind, rel.Name).
		WithDetail("%s", strings.Join(lines, "\n"))
	err.Hint = dropCascadeHint
	return err
}

// dropCascadeHint is PostgreSQL's hint for a DROP refused for dependents.
const dropCascadeHint = "Use DROP ... CASCADE to drop the dependent objects too."

// cascadeNotice is PostgreSQL's NOTICE for a DROP ... CASCADE that drops
// dependents too ("" when there are none).
func cascadeNotice(edges []dependencyEdge) string {
	switch len(edges) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("drop cascades to %s %s", edges[0].obj.Kind, edges[0].obj.Name)
	}
	return fmt.Sprintf("drop cascades to %d other objects", len(edges))
}

// checkReplaceView validates CREATE OR REPLACE VIEW of old by rel reading
// deps: the view must not come to read itself (RS-1011), and it keeps its
// columns (it may add some at the end), as PostgreSQL requires, because
// views reading it were bound to those columns.
func (a *Actor) checkReplaceView(old, rel *catalog.Relation, deps []catalog.ID) error {
	if path := a.pathTo(old.ID, deps, map[catalog.ID]bool{}); path != nil {
		names := []string{old.Name}
		for _, id := range path {
			names = append(names, a.snap.byID[id].Name)
		}
		return errcode.New(errcode.InlineViewCycle, "infinite recursion detected in the definition of view %q", old.Name).
			WithDetail("view %s would read itself: %s", old.Name, strings.Join(names, " → "))
	}
	if old.Kind != catalog.KindView {
		return nil
	}
	if len(rel.Columns) < len(old.Columns) {
		return errcode.New(errcode.InvalidTableDefinition, "cannot drop columns from view")
	}
	for i, c := range old.Columns {
		n := rel.Columns[i]
		if n.Name != c.Name {
			e := errcode.New(errcode.InvalidTableDefinition, "cannot change name of view column %q to %q", c.Name, n.Name)
			e.Hint = "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."
			return e
		}
		if !n.Type.Equal(c.Type) {
			return errcode.New(errcode.InvalidTableDefinition, "cannot change data type of view column %q from %s to %s", c.Name, c.Type.SQLName(), n.Type.SQLName())
		}
	}
	return nil
}

// pathTo returns a dependency path from one of from to target: the
// relations read one after the other, target last; nil when there is none.
func (a *Actor) pathTo(target catalog.ID, from []catalog.ID, seen map[catalog.ID]bool) []catalog.ID {
	for _, id := range from {
		if id == target {
			return []catalog.ID{id}
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		if p := a.pathTo(target, a.snap.deps[id], seen); p != nil {
			return append([]catalog.ID{id}, p...)
		}
	}
	return nil
}

func (a *Actor) rename(m RenameRelation) (DDLResult, error) {
	rel, ok := a.snap.byName[m.Name]
	if !ok {
		if m.IfExists {
			return DDLResult{Version: a.snap.Version, Notice: fmt.Sprintf("relation %q does not exist, skipping", m.Name)}, nil
		}
		return DDLResult{}, errcode.New(errcode.UndefinedObject, "relation %q does not exist", m.Name)
	}
	if rel.Kind != m.Kind {
		return DDLResult{}, errcode.New(errcode.WrongObjectType, "%q is not %s", m.Name, withArticle(kindWord(m.Kind)))
	}
	if a.relationNameTaken(catalog.Key(rel.Schema, m.NewName)) {
		return DDLResult{}, errcode.New(errcode.DuplicateObject, "relation %q already exists", m.NewName)
	}
	renamed := *rel
	renamed.Name = m.NewName
	if rel.Kind == catalog.KindTable && len(rel.PrimaryKey) > 0 && rel.PrimaryKeyName == "" {
		// PostgreSQL keeps the constraint's name (t_pkey) when the table
		// is renamed.
		renamed.PrimaryKeyName = rel.PrimaryKeyConstraint()
	}
	next := a.snap.clone()
	next.put(&renamed, a.snap.deps[rel.ID])
	if err := a.commit(next, []*catalog.Relation{&renamed}, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: &renamed}, nil
}

func (a *Actor) setViewOptions(m SetViewOptions) (DDLResult, error) {
	rel, ok := a.snap.byName[m.Name]
	if !ok {
		return DDLResult{}, errcode.New(errcode.UndefinedObject, "relation %q does not exist", m.Name)
	}
	if rel.Kind != catalog.KindMaterializedView {
		return DDLResult{}, errcode.New(errcode.WrongObjectType, "%q is not a materialized view", m.Name)
	}
	changed := *rel
	changed.RetainHistory = m.RetainHistory
	changed.FreshnessTarget = m.FreshnessTarget
	next := a.snap.clone()
	next.put(&changed, a.snap.deps[rel.ID])
	if err := a.commit(next, []*catalog.Relation{&changed}, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: &changed}, nil
}

func (a *Actor) recompile(m RecompileView) (DDLResult, error) {
	rel := m.Relation
	old, ok := a.snap.byID[rel.ID]
	// INVARIANT: the session recompiled a view of the snapshot it read;
	// a view dropped since is an operating race, not a bug.
	if !ok || old.Kind != catalog.KindMaterializedView {
		return DDLResult{}, errcode.New(errcode.UndefinedObject, "materialized view %q does not exist", rel.Name)
	}
	if path := a.pathTo(old.ID, m.Deps, map[catalog.ID]bool{}); path != nil {
		return DDLResult{}, errcode.New(errcode.InlineViewCycle, "infinite recursion detected in the definition of materialized view %q", old.Name)
	}
	recompiled := *old
	recompiled.Refs, recompiled.Pinned = rel.Refs, rel.Pinned
	recompiled.Plan = old.Plan + 1
	next := a.snap.clone()
	next.put(&recompiled, m.Deps)
	if err := a.commit(next, []*catalog.Relation{&recompiled}, nil); err != nil {
		return DDLResult{}, err
	}
	return DDLResult{Version: next.Version, Changed: &recompiled}, nil
}
