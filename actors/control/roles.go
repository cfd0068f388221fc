package control

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/ivm/kv"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
)

// Roles (CREATE ROLE, ALTER ROLE, DROP ROLE) and their table privileges
// (GRANT, REVOKE) live in the control DB beside the catalog, one record per
// role. A role keeps its password only as a SCRAM-SHA-256 verifier, made
// by the session (this actor draws no randomness), never the password.
//
//	0x0B 0x00          the next role OID (uint64 BE)
//	0x0B 0x01 name     role record (JSON)
//
// Roles are not part of the catalog Snapshot: they change no plan, and
// authentication asks for one role by name.

const (
	prefixRoles    byte = 0x0B
	rolesNextOID   byte = 0x00
	rolesRecord    byte = 0x01
	roleFormatV1        = 1
	roleNameMax         = 63 // PostgreSQL's NAMEDATALEN - 1
	firstRoleOID        = 16384
	bootstrapOID        = 10
	bootstrapOwner      = "rockstream"
)

// BootstrapRole is the superuser `rockstream start --auth=password`
// creates on first start; it owns every object (pg_class.relowner 10).
const BootstrapRole = bootstrapOwner

// Privileges is a set of table privileges.
type Privileges uint8

// Table privileges GRANT and REVOKE manage.
const (
	PrivSelect Privileges = 1 << iota
	PrivInsert
	PrivUpdate
	PrivDelete
	// PrivAll is GRANT ALL [PRIVILEGES].
	PrivAll = PrivSelect | PrivInsert | PrivUpdate | PrivDelete
)

// String names the privilege set's first member as PostgreSQL's messages do.
func (p Privileges) String() string {
	var names []string
	for _, x := range []struct {
		p    Privileges
		name string
	}{{PrivSelect, "SELECT"}, {PrivInsert, "INSERT"}, {PrivUpdate, "UPDATE"}, {PrivDelete, "DELETE"}} {
		if p&x.p != 0 {
			names = append(names, x.name)
		}
	}
	return strings.Join(names, ", ")
}

// Grant is a role's privileges on one relation.
type Grant struct {
	Relation   catalog.ID
	Privileges Privileges
}

// Role is one role's durable record.
type Role struct {
	Name      string
	OID       int64
	Superuser bool
	Login     bool
	// Verifier is PostgreSQL's text form of a SCRAM-SHA-256 verifier, ""
	// for a role without a password.
	Verifier string
	// Grants are sorted by relation id, at most one per relation.
	Grants []Grant
}

// Privileges returns the role's privileges on a relation.
func (r Role) Privileges(id catalog.ID) Privileges {
	for _, g := range r.Grants {
		if g.Relation == id {
			return g.Privileges
		}
	}
	return 0
}

// Messages the control actor answers about roles.
type (
	// GetRole → RoleLookup.
	GetRole struct{ Name string }
	// RoleLookup answers GetRole.
	RoleLookup struct {
		Role  Role
		Found bool
	}
	// GetRoles → RoleList (pg_roles), sorted by name.
	GetRoles struct{}
	// RoleList answers GetRoles.
	RoleList struct{ Roles []Role }
	// CreateRole → RoleResult. Role.OID is allocated here (the bootstrap
	// role gets 10). With IfAbsent an existing role is left as it is.
	CreateRole struct {
		Role     Role
		IfAbsent bool
	}
	// AlterRole → RoleResult: each Set* flag changes one attribute.
	AlterRole struct {
		Name                                string
		SetVerifier, SetLogin, SetSuperuser bool
		Verifier                            string
		Login, Superuser                    bool
	}
	// DropRole → RoleResult. Live lists the relations that exist now, so
	// that privileges on dropped relations do not keep a role alive.
	DropRole struct {
		Name     string
		IfExists bool
		Live     []catalog.ID
		// LiveNames are Live's names, for the error's detail.
		LiveNames []string
	}
	// GrantPrivileges → RoleResult (GRANT, or REVOKE when Revoke).
	GrantPrivileges struct {
		Role       string
		Relation   catalog.ID
		Privileges Privileges
		Revoke     bool
	}
	// RoleResult answers a role change.
	RoleResult struct {
		// Notice is a PostgreSQL-style NOTICE, "" if none.
		Notice string
	}
)

func roleKey(name string) []byte {
	return append([]byte{prefixRoles, rolesRecord}, name...)
}

func roleNextOIDKey() []byte { return []byte{prefixRoles, rolesNextOID} }

type roleRecord struct {
	Format int  `json:"format"`
	Role   Role `json:"role"`
}

// loadRoles reads every role record.
func (a *Actor) loadRoles() error {
	a.roles = map[string]Role{}
	a.nextRoleOID = firstRoleOID
	if v, ok, err := a.store.Get(roleNextOIDKey()); err != nil {
		return err
	} else if ok {
		n, err := decodeUint64(v)
		if err != nil {
			return errcode.Wrap(CatalogCorrupt, err, "role OID counter")
		}
		a.nextRoleOID = int64(n)
	}
	return kv.ScanPrefix(a.store, []byte{prefixRoles, rolesRecord}, func(k, v []byte) error {
		var rec roleRecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return errcode.Wrap(CatalogCorrupt, err, "role record %x is unreadable", k)
		}
		if rec.Format != roleFormatV1 {
			return errcode.New(CatalogFormat, "role record %x has format %d; this binary reads format %d", k, rec.Format, roleFormatV1)
		}
		// INVARIANT: the key names the record's own role (paired with roleKey).
		if string(roleKey(rec.Role.Name)) != string(k) {
			return errcode.New(CatalogCorrupt, "role record %x holds role %q stored under the wrong key", k, rec.Role.Name)
		}
		a.roles[rec.Role.Name] = rec.Role
		return nil
	})
}

// putRole writes one role durably, then keeps it in memory.
func (a *Actor) putRole(r Role, nextOID int64) error {
	v, err := json.Marshal(roleRecord{Format: roleFormatV1, Role: r})
	if err != nil {
		return errcode.Internal(err)
	}
	b := kv.WriteBatch{Ops: []kv.Op{{Key: roleKey(r.Name), Value: v}, {Key: roleNextOIDKey(), Value: encodeUint64(uint64(nextOID))}}}
	sortOps(b.Ops)
	if err := a.store.Apply(&b); err != nil {
		return errcode.Wrap(errcode.InternalError, err, "write role %q", r.Name)
	}
	a.roles[r.Name] = r
	a.nextRoleOID = nextOID
	return nil
}

func (a *Actor) roleList() RoleList {
	names := make([]string, 0, len(a.roles))
	for n := range a.roles { //lint:maprange sorted below
		names = append(names, n)
	}
	sort.Strings(names)
	out := RoleList{Roles: make([]Role, len(names))}
	for i, n := range names {
		out.Roles[i] = cloneRole(a.roles[n])
	}
	return out
}

// cloneRole copies a role's grants so a reply never aliases actor state.
func cloneRole(r Role) Role {
	r.Grants = append([]Grant(nil), r.Grants...)
	return r
}

func (a *Actor) roleByName(name string) (Role, error) {
	r, ok := a.roles[name]
	if !ok {
		return Role{}, errcode.New(errcode.UndefinedRole, "role %q does not exist", name)
	}
	return r, nil
}

func (a *Actor) createRole(m CreateRole) (RoleResult, error) {
	r := m.Role
	if _, ok := a.roles[r.Name]; ok {
		if m.IfAbsent {
			return RoleResult{}, nil
		}
		return RoleResult{}, errcode.New(errcode.DuplicateRole, "role %q already exists", r.Name)
	}
	if r.Name == "" || len(r.Name) > roleNameMax {
		return RoleResult{}, errcode.New(errcode.InvalidConfiguration, "role name %q must have 1 to %d bytes", r.Name, roleNameMax)
	}
	next := a.nextRoleOID
	if r.Name == BootstrapRole {
		r.OID = bootstrapOID
	} else {
		r.OID = next
		next++
	}
	r.Grants = nil
	return RoleResult{}, a.putRole(r, next)
}

func (a *Actor) alterRole(m AlterRole) (RoleResult, error) {
	r, err := a.roleByName(m.Name)
	if err != nil {
		return RoleResult{}, err
	}
	if m.SetVerifier {
		r.Verifier = m.Verifier
	}
	if m.SetLogin {
		r.Login = m.Login
	}
	if m.SetSuperuser {
		r.Superuser = m.Superuser
	}
	return RoleResult{}, a.putRole(r, a.nextRoleOID)
}

func (a *Actor) dropRole(m DropRole) (RoleResult, error) {
	r, ok := a.roles[m.Name]
	if !ok {
		if m.IfExists {
			return RoleResult{Notice: fmt.Sprintf("role %q does not exist, skipping", m.Name)}, nil
		}
		return RoleResult{}, errcode.New(errcode.UndefinedRole, "role %q does not exist", m.Name)
	}
	var depends []string
	for i, id := range m.Live {
		if r.Privileges(id) != 0 {
			depends = append(depends, "privileges for table "+m.LiveNames[i])
		}
	}
	if len(depends) > 0 {
		return RoleResult{}, errcode.New(errcode.RoleHasDependents, "role %q cannot be dropped because some objects depend on it", m.Name).
			WithDetail("%s", strings.Join(depends, "\n"))
	}
	var b kv.WriteBatch
	b.Ops = append(b.Ops, kv.Op{Key: roleKey(m.Name), Delete: true})
	if err := a.store.Apply(&b); err != nil {
		return RoleResult{}, errcode.Wrap(errcode.InternalError, err, "drop role %q", m.Name)
	}
	delete(a.roles, m.Name)
	return RoleResult{}, nil
}

func (a *Actor) grantPrivileges(m GrantPrivileges) (RoleResult, error) {
	r, err := a.roleByName(m.Role)
	if err != nil {
		return RoleResult{}, err
	}
	r = cloneRole(r)
	have := r.Privileges(m.Relation)
	want := have | m.Privileges
	if m.Revoke {
		want = have &^ m.Privileges
	}
	grants := r.Grants[:0]
	for _, g := range r.Grants {
		if g.Relation != m.Relation {
			grants = append(grants, g)
		}
	}
	if want != 0 {
		grants = append(grants, Grant{Relation: m.Relation, Privileges: want})
	}
	sort.Slice(grants, func(i, j int) bool { return lessID(grants[i].Relation, grants[j].Relation) })
	r.Grants = grants
	return RoleResult{}, a.putRole(r, a.nextRoleOID)
}

func lessID(x, y catalog.ID) bool {
	if x.Namespace != y.Namespace {
		return string(x.Namespace[:]) < string(y.Namespace[:])
	}
	return string(x.Object[:]) < string(y.Object[:])
}

// receiveRole answers the role messages; false when msg is none of them.
func (a *Actor) receiveRole(msg any) (any, bool) {
	var r RoleResult
	var err error
	switch m := msg.(type) {
	case GetRole:
		role, ok := a.roles[m.Name]
		return RoleLookup{Role: cloneRole(role), Found: ok}, true
	case GetRoles:
		return a.roleList(), true
	case CreateRole:
		r, err = a.createRole(m)
	case AlterRole:
		r, err = a.alterRole(m)
	case DropRole:
		r, err = a.dropRole(m)
	case GrantPrivileges:
		r, err = a.grantPrivileges(m)
	default:
		return nil, false
	}
	if err != nil {
		a.noteFenced(err)
		return err, true
	}
	return r, true
}
