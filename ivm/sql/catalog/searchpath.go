package catalog

// WithSearchPath returns base with unqualified names resolving through
// path, a session's search_path as schema names in order (schemas that do
// not exist are skipped, as PostgreSQL skips them): the first schema
// holding the name wins, and a name no schema on the path holds resolves
// in pg_catalog, which PostgreSQL searches implicitly. Qualified names
// are passed to base unchanged.
func WithSearchPath(base Catalog, path []string) Catalog {
	return searchPathCatalog{base: base, path: path}
}

type searchPathCatalog struct {
	base Catalog
	path []string
}

func (c searchPathCatalog) Namespace() NamespaceID { return c.base.Namespace() }

func (c searchPathCatalog) LookupRelation(name []string) (*Relation, bool) {
	if len(name) != 1 {
		return c.base.LookupRelation(name)
	}
	for _, schema := range c.path {
		if rel, ok := c.base.LookupRelation([]string{schema, name[0]}); ok {
			return rel, true
		}
	}
	return c.base.LookupRelation([]string{"pg_catalog", name[0]})
}

func (c searchPathCatalog) RelationByID(id ID) (*Relation, bool) { return c.base.RelationByID(id) }

// EnterView implements ExpansionObserver for the base (a Recorder).
func (c searchPathCatalog) EnterView() { enterView(c.base) }

// LeaveView implements ExpansionObserver for the base.
func (c searchPathCatalog) LeaveView() { leaveView(c.base) }
