package errcode

// Role and privilege codes: authentication against roles, the reserved
// superuser connection slots, role management in SQL and table privileges
// (GRANT/REVOKE). They take RS-2400 and RS-2401, which the gateway range
// kept for access control, and continue after the gateway's last code.
var (
	InsufficientPrivilege = Register("RS-2400", "auth.insufficient_privilege", "42501",
		"Ask a superuser to GRANT the privilege (GRANT SELECT ON t TO role), or connect as a role that has it; only superusers manage roles and run DDL.")
	ReservedConnections = Register("RS-2401", "server.reserved_connections", "53300",
		"The remaining connection slots are kept for superusers; close idle connections or use a connection pool.")
	LoginNotPermitted = Register("RS-2460", "auth.login_not_permitted", "28000",
		"A superuser can allow it with ALTER ROLE name LOGIN.")
	DuplicateRole = Register("RS-2461", "role.duplicate", "42710",
		"Choose another name, or change the existing role with ALTER ROLE.")
	UndefinedRole = Register("RS-2462", "role.undefined", "42704",
		"Check the name in pg_roles (\\du in psql); create it with CREATE ROLE name LOGIN PASSWORD '...'.")
	RoleHasDependents = Register("RS-2463", "role.dependent_objects", "2BP01",
		"REVOKE the role's privileges first (REVOKE ALL ON t FROM role), then drop it.")
	RoleInUse = Register("RS-2464", "role.in_use", "55006",
		"Connect as another superuser to drop this role.")
	BootstrapPasswordMissing = Register("RS-2465", "server.bootstrap_password_missing", "22023",
		"Set ROCKSTREAM_PASSWORD or pass --password-file with the password of the superuser role rockstream; it is needed on the first start with --auth=password.")
)
