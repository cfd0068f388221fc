package engine

import (
	"context"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/actors/control"
	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/gateway"
	"github.com/rockstream/rockstream/ivm/sql/catalog"
	"github.com/rockstream/rockstream/syscat"
)

// Roles in SQL: CREATE ROLE / CREATE USER, ALTER ROLE, DROP ROLE and
// GRANT / REVOKE on tables and views, as PostgreSQL 15 words them. Only
// superusers run them (42501 otherwise). A PASSWORD becomes a SCRAM-SHA-256
// verifier here, before it reaches the control plane; a password that is
// already a verifier ('SCRAM-SHA-256$...') is stored as it is, as
// PostgreSQL does.

// LookupRole implements gateway.RoleSource: password authentication asks
// the control plane for the role's verifier and attributes.
func (e *Engine) LookupRole(ctx context.Context, name string) (gateway.Role, bool, error) {
	m, err := e.ask(ctx, control.ActorID, control.GetRole{Name: name})
	if err != nil {
		return gateway.Role{}, false, err
	}
	r := m.(control.RoleLookup)
	return gateway.Role{Verifier: r.Role.Verifier, Superuser: r.Role.Superuser, Login: r.Role.Login}, r.Found, nil
}

// EnsureBootstrapRole creates the superuser role rockstream with password
// on the first start with password authentication; an existing role is
// left as it is (change its password with ALTER ROLE). It fails when the
// role is missing and no password was given.
func (e *Engine) EnsureBootstrapRole(ctx context.Context, password string) error {
	m, err := e.ask(ctx, control.ActorID, control.GetRole{Name: control.BootstrapRole})
	if err != nil {
		return err
	}
	if m.(control.RoleLookup).Found {
		return nil
	}
	if password == "" {
		return errcode.New(errcode.BootstrapPasswordMissing, "--auth=password needs the password of the superuser role %q on the first start", control.BootstrapRole)
	}
	verifier, err := verifierOf(password)
	if err != nil {
		return err
	}
	_, err = e.ask(ctx, control.ActorID, control.CreateRole{Role: control.Role{Name: control.BootstrapRole, Superuser: true, Login: true, Verifier: verifier}, IfAbsent: true})
	return err
}

// verifierOf is the verifier stored for a PASSWORD string.
func verifierOf(password string) (string, error) {
	if gateway.LooksLikeSCRAMVerifier(password) {
		return password, nil
	}
	v, err := gateway.NewSCRAMVerifier(password)
	if err != nil {
		return "", errcode.Internal(err)
	}
	return v.String(), nil
}

// roleStatement runs a role or privilege statement; ok is false when n is
// none of them.
func (s *session) roleStatement(ctx context.Context, n *pg_query.Node) (cur *rowsCursor, ok bool, err error) {
	var tag, denied string
	switch n.Node.(type) {
	case *pg_query.Node_CreateRoleStmt:
		tag, denied = "CREATE ROLE", "permission denied to create role"
	case *pg_query.Node_AlterRoleStmt:
		tag, denied = "ALTER ROLE", "permission denied"
	case *pg_query.Node_DropRoleStmt:
		tag, denied = "DROP ROLE", "permission denied to drop role"
	case *pg_query.Node_GrantStmt:
		tag = "GRANT"
		if !n.GetGrantStmt().IsGrant {
			tag = "REVOKE"
		}
	default:
		return nil, false, nil
	}
	if s.info.Unprivileged {
		if denied == "" {
			// GRANT on a relation a non-superuser does not own (every
			// relation is owned by the bootstrap superuser).
			denied = "permission denied"
			if g := n.GetGrantStmt(); g != nil && len(g.Objects) > 0 {
				if rv := g.Objects[0].GetRangeVar(); rv != nil {
					denied = "permission denied for table " + rv.Relname
				}
			}
		}
		return nil, true, errcode.New(errcode.InsufficientPrivilege, "%s", denied)
	}
	cur = &rowsCursor{tag: tag}
	switch x := n.Node.(type) {
	case *pg_query.Node_CreateRoleStmt:
		err = s.createRole(ctx, x.CreateRoleStmt)
	case *pg_query.Node_AlterRoleStmt:
		err = s.alterRole(ctx, x.AlterRoleStmt)
	case *pg_query.Node_DropRoleStmt:
		err = s.dropRoles(ctx, x.DropRoleStmt, cur)
	case *pg_query.Node_GrantStmt:
		err = s.grant(ctx, x.GrantStmt)
	}
	if err != nil {
		return nil, true, err
	}
	return cur, true, nil
}

// roleAttributes are the options of CREATE ROLE / ALTER ROLE this server
// keeps; every other option is refused rather than ignored.
type roleAttributes struct {
	setPassword, setLogin, setSuperuser bool
	verifier                            string
	login, superuser                    bool
}

func roleOptions(options []*pg_query.Node) (roleAttributes, error) {
	var a roleAttributes
	for _, o := range options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "password":
			a.setPassword = true
			if d.Arg != nil {
				v, err := verifierOf(d.Arg.GetString_().GetSval())
				if err != nil {
					return a, err
				}
				a.verifier = v
			}
		case "canlogin":
			a.setLogin, a.login = true, d.Arg.GetBoolean().GetBoolval()
		case "superuser":
			a.setSuperuser, a.superuser = true, d.Arg.GetBoolean().GetBoolval()
		case "inherit":
			// Every role inherits (there is no role membership); NOINHERIT
			// would change nothing either.
		default:
			return a, errcode.New(errcode.GatewayUnsupported, "role option %s is not supported", strings.ToUpper(d.Defname)).
				WithDetail("RockStream roles have the LOGIN, SUPERUSER and PASSWORD attributes")
		}
	}
	return a, nil
}

func reservedRoleName(name string) error {
	if strings.HasPrefix(name, "pg_") {
		return errcode.New(errcode.InsufficientPrivilege, "role name %q is reserved", name).WithSQLState("42939").
			WithDetail("Role names starting with \"pg_\" are reserved.")
	}
	return nil
}

func (s *session) createRole(ctx context.Context, st *pg_query.CreateRoleStmt) error {
	if err := reservedRoleName(st.Role); err != nil {
		return err
	}
	attrs, err := roleOptions(st.Options)
	if err != nil {
		return err
	}
	role := control.Role{Name: st.Role, Verifier: attrs.verifier, Superuser: attrs.superuser,
		// CREATE USER is CREATE ROLE ... LOGIN.
		Login: st.StmtType == pg_query.RoleStmtType_ROLESTMT_USER}
	if attrs.setLogin {
		role.Login = attrs.login
	}
	_, err = s.e.ask(ctx, control.ActorID, control.CreateRole{Role: role})
	return err
}

func (s *session) alterRole(ctx context.Context, st *pg_query.AlterRoleStmt) error {
	name, err := s.roleSpecName(st.Role)
	if err != nil {
		return err
	}
	attrs, err := roleOptions(st.Options)
	if err != nil {
		return err
	}
	_, err = s.e.ask(ctx, control.ActorID, control.AlterRole{Name: name,
		SetVerifier: attrs.setPassword, Verifier: attrs.verifier,
		SetLogin: attrs.setLogin, Login: attrs.login,
		SetSuperuser: attrs.setSuperuser, Superuser: attrs.superuser})
	return err
}

func (s *session) dropRoles(ctx context.Context, st *pg_query.DropRoleStmt, cur *rowsCursor) error {
	snap, err := s.e.snapshot(ctx)
	if err != nil {
		return err
	}
	var live []catalog.ID
	var liveNames []string
	for _, r := range snap.Relations() {
		live, liveNames = append(live, r.ID), append(liveNames, r.Name)
	}
	for _, n := range st.Roles {
		name, err := s.roleSpecName(n.GetRoleSpec())
		if err != nil {
			return err
		}
		if name == s.info.User {
			return errcode.New(errcode.RoleInUse, "current user cannot be dropped")
		}
		m, err := s.e.ask(ctx, control.ActorID, control.DropRole{Name: name, IfExists: st.MissingOk, Live: live, LiveNames: liveNames})
		if err != nil {
			return err
		}
		if r := m.(control.RoleResult); r.Notice != "" {
			cur.notices = append(cur.notices, errcode.New(errcode.DDLNotice, "%s", r.Notice))
		}
	}
	return nil
}

// roleSpecName resolves a RoleSpec (a name, CURRENT_USER, SESSION_USER).
func (s *session) roleSpecName(r *pg_query.RoleSpec) (string, error) {
	if r == nil {
		return "", errcode.New(errcode.GatewayUnsupported, "ALTER ROLE ALL is not supported")
	}
	switch r.Roletype {
	case pg_query.RoleSpecType_ROLESPEC_CSTRING:
		return r.Rolename, nil
	case pg_query.RoleSpecType_ROLESPEC_CURRENT_USER, pg_query.RoleSpecType_ROLESPEC_SESSION_USER, pg_query.RoleSpecType_ROLESPEC_CURRENT_ROLE:
		return s.info.User, nil
	}
	return "", errcode.New(errcode.GatewayUnsupported, "PUBLIC is not supported here").
		WithDetail("grant privileges to named roles")
}

// privilegeNames maps GRANT's privilege words to privilege bits.
var privilegeNames = map[string]control.Privileges{
	"select": control.PrivSelect, "insert": control.PrivInsert,
	"update": control.PrivUpdate, "delete": control.PrivDelete,
}

func (s *session) grant(ctx context.Context, st *pg_query.GrantStmt) error {
	if st.Targtype != pg_query.GrantTargetType_ACL_TARGET_OBJECT || st.Objtype != pg_query.ObjectType_OBJECT_TABLE {
		return errcode.New(errcode.GatewayUnsupported, "GRANT and REVOKE are supported on tables and views only")
	}
	if st.GrantOption {
		return errcode.New(errcode.GatewayUnsupported, "WITH GRANT OPTION is not supported")
	}
	privs := control.PrivAll
	if len(st.Privileges) > 0 {
		privs = 0
		for _, p := range st.Privileges {
			ap := p.GetAccessPriv()
			if len(ap.GetCols()) > 0 {
				return errcode.New(errcode.GatewayUnsupported, "column privileges are not supported").WithDetail("grant on the whole table or on a view of the columns")
			}
			bit, ok := privilegeNames[ap.GetPrivName()]
			if !ok {
				return errcode.New(errcode.GatewayUnsupported, "privilege %s is not supported", strings.ToUpper(ap.GetPrivName())).
					WithDetail("tables and views have the SELECT, INSERT, UPDATE and DELETE privileges")
			}
			privs |= bit
		}
	}
	snap, err := s.e.snapshot(ctx)
	if err != nil {
		return err
	}
	var rels []*catalog.Relation
	for _, o := range st.Objects {
		rv := o.GetRangeVar()
		name := []string{rv.GetRelname()}
		if rv.GetSchemaname() != "" {
			name = []string{rv.GetSchemaname(), rv.GetRelname()}
		}
		rel, ok := s.lookup(snap, name)
		if !ok {
			return errcode.New(errcode.SQLUndefinedTable, "relation %q does not exist", rv.GetRelname())
		}
		rels = append(rels, rel)
	}
	var roles []string
	for _, g := range st.Grantees {
		name, err := s.roleSpecName(g.GetRoleSpec())
		if err != nil {
			return err
		}
		// Every grantee must exist before anything changes (PostgreSQL
		// resolves them all first).
		m, err := s.e.ask(ctx, control.ActorID, control.GetRole{Name: name})
		if err != nil {
			return err
		}
		if !m.(control.RoleLookup).Found {
			return errcode.New(errcode.UndefinedRole, "role %q does not exist", name)
		}
		roles = append(roles, name)
	}
	for _, role := range roles {
		for _, rel := range rels {
			if _, err := s.e.ask(ctx, control.ActorID, control.GrantPrivileges{Role: role, Relation: rel.ID, Privileges: privs, Revoke: !st.IsGrant}); err != nil {
				return err
			}
		}
	}
	return nil
}

// roleRows are the roles as the system catalog shows them.
func (s *session) roleRows(ctx context.Context) ([]syscat.Role, error) {
	m, err := s.e.ask(ctx, control.ActorID, control.GetRoles{})
	if err != nil {
		return nil, err
	}
	var out []syscat.Role
	for _, r := range m.(control.RoleList).Roles {
		out = append(out, syscat.Role{Name: r.Name, OID: r.OID, Superuser: r.Superuser, Login: r.Login, Verifier: r.Verifier})
	}
	return out, nil
}
