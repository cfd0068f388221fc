package gateway

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rockstream/rockstream/errcode"
	"github.com/rockstream/rockstream/internal/version"
	"github.com/rockstream/rockstream/ivm/types"
)

// ServerVersion is what `server_version` and version() report; the leaf
// package version says why it reads "15.0".
const ServerVersion = version.Server

// serverVersionNum is `server_version_num`, consistent with ServerVersion.
const serverVersionNum = version.ServerNum

// paramDef describes one session parameter (a row of SHOW ALL / pg_settings).
type paramDef struct {
	// name is the canonical spelling (ParameterStatus and SHOW column name).
	name string
	// boot is the default value.
	boot string
	// reported parameters are sent as ParameterStatus at startup and when
	// they change, as PostgreSQL 15 does (GUC_REPORT).
	reported bool
	// readOnly parameters cannot be SET (SET to the current value is
	// accepted, as clients do that for standard_conforming_strings).
	readOnly bool
	// normalize validates a new value and returns its canonical form.
	normalize func(value string) (string, error)
	vartype   string
	category  string
	desc      string
}

// paramDefs lists the parameters clients send or ask for (research
// ecosystem.md T6 and the captures in testdata/clients).
//
//lint:immutable a constant table; never assigned after init.
var paramDefs = []paramDef{
	{name: "application_name", boot: "", reported: true, normalize: normalizeAny, vartype: "string", category: "Reporting and Logging", desc: "Sets the application name to be reported in statistics and logs."},
	{name: "bytea_output", boot: "hex", normalize: normalizeEnum("hex"), vartype: "enum", category: "Client Connection Defaults", desc: "Sets the output format for bytea."},
	{name: "client_encoding", boot: "UTF8", reported: true, normalize: normalizeEncoding, vartype: "string", category: "Client Connection Defaults", desc: "Sets the client's character set encoding."},
	{name: "client_min_messages", boot: "notice", normalize: normalizeEnum("debug5", "debug4", "debug3", "debug2", "debug1", "log", "notice", "warning", "error"), vartype: "enum", category: "Client Connection Defaults", desc: "Sets the message levels that are sent to the client."},
	{name: "DateStyle", boot: "ISO, MDY", reported: true, normalize: normalizeDateStyle, vartype: "string", category: "Client Connection Defaults", desc: "Sets the display format for date and time values."},
	{name: "default_transaction_isolation", boot: "read committed", normalize: normalizeIsolation, vartype: "enum", category: "Client Connection Defaults", desc: "Sets the transaction isolation level of each new transaction."},
	{name: "default_transaction_read_only", boot: "off", reported: true, normalize: normalizeBool, vartype: "bool", category: "Client Connection Defaults", desc: "Sets the default read-only status of new transactions."},
	{name: "default_transaction_deferrable", boot: "off", normalize: normalizeBool, vartype: "bool", category: "Client Connection Defaults", desc: "Sets the default deferrable status of new transactions."},
	{name: "extra_float_digits", boot: "1", normalize: normalizeIntRange(-15, 3), vartype: "integer", category: "Client Connection Defaults", desc: "Sets the number of digits displayed for floating-point values."},
	{name: "idle_in_transaction_session_timeout", boot: "0", normalize: normalizeDuration, vartype: "integer", category: "Client Connection Defaults", desc: "Sets the maximum allowed idle time between queries, when in a transaction."},
	{name: "in_hot_standby", boot: "off", reported: true, readOnly: true, vartype: "bool", category: "Preset Options", desc: "Shows whether hot standby is currently active."},
	{name: "integer_datetimes", boot: "on", reported: true, readOnly: true, vartype: "bool", category: "Preset Options", desc: "Shows whether datetimes are integer based."},
	{name: "IntervalStyle", boot: "postgres", reported: true, normalize: normalizeEnum("postgres", "postgres_verbose", "sql_standard", "iso_8601"), vartype: "enum", category: "Client Connection Defaults", desc: "Sets the display format for interval values."},
	{name: "is_superuser", boot: "on", reported: true, readOnly: true, vartype: "bool", category: "Preset Options", desc: "Shows whether the current user is a superuser."},
	{name: "lc_messages", boot: "C", normalize: normalizeAny, vartype: "string", category: "Client Connection Defaults", desc: "Sets the language in which messages are displayed."},
	{name: "lc_monetary", boot: "C", normalize: normalizeAny, vartype: "string", category: "Client Connection Defaults", desc: "Sets the locale for formatting monetary amounts."},
	{name: "lc_numeric", boot: "C", normalize: normalizeAny, vartype: "string", category: "Client Connection Defaults", desc: "Sets the locale for formatting numbers."},
	{name: "lc_time", boot: "C", normalize: normalizeAny, vartype: "string", category: "Client Connection Defaults", desc: "Sets the locale for formatting date and time values."},
	{name: "lock_timeout", boot: "0", normalize: normalizeDuration, vartype: "integer", category: "Client Connection Defaults", desc: "Sets the maximum allowed duration of any wait for a lock."},
	{name: "max_identifier_length", boot: "63", readOnly: true, vartype: "integer", category: "Preset Options", desc: "Shows the maximum identifier length."},
	{name: "search_path", boot: `"$user", public`, normalize: normalizeAny, vartype: "string", category: "Client Connection Defaults", desc: "Sets the schema search order for names that are not schema-qualified."},
	{name: "server_encoding", boot: "UTF8", reported: true, readOnly: true, vartype: "string", category: "Preset Options", desc: "Shows the server (database) character set encoding."},
	{name: "server_version", boot: ServerVersion, reported: true, readOnly: true, vartype: "string", category: "Preset Options", desc: "Shows the server version."},
	{name: "server_version_num", boot: serverVersionNum, readOnly: true, vartype: "integer", category: "Preset Options", desc: "Shows the server version as an integer."},
	{name: "session_authorization", boot: "", reported: true, readOnly: true, vartype: "string", category: "Preset Options", desc: "Sets the session user name."},
	{name: "standard_conforming_strings", boot: "on", reported: true, readOnly: true, vartype: "bool", category: "Version and Platform Compatibility", desc: "Causes '...' strings to treat backslashes literally."},
	{name: "statement_timeout", boot: "0", normalize: normalizeDuration, vartype: "integer", category: "Client Connection Defaults", desc: "Sets the maximum allowed duration of any statement."},
	{name: "synchronous_commit", boot: "on", normalize: normalizeEnum("on", "off", "local", "remote_write", "remote_apply"), vartype: "enum", category: "Write-Ahead Log", desc: "Sets the current transaction's synchronization level."},
	{name: "TimeZone", boot: "Etc/UTC", reported: true, normalize: normalizeTimeZone, vartype: "string", category: "Client Connection Defaults", desc: "Sets the time zone for displaying and interpreting time stamps."},
	{name: "timezone_abbreviations", boot: "Default", normalize: normalizeAny, vartype: "string", category: "Client Connection Defaults", desc: "Selects a file of time zone abbreviations."},
	{name: "transaction_isolation", boot: "read committed", normalize: normalizeIsolation, vartype: "enum", category: "Client Connection Defaults", desc: "Sets the current transaction's isolation level."},
	{name: "transaction_read_only", boot: "off", normalize: normalizeBool, vartype: "bool", category: "Client Connection Defaults", desc: "Sets the current transaction's read-only status."},
	{name: "transaction_deferrable", boot: "off", normalize: normalizeBool, vartype: "bool", category: "Client Connection Defaults", desc: "Whether to defer a read-only serializable transaction until it can be executed with no possible serialization failures."},
	{name: "row_security", boot: "on", normalize: normalizeBool, vartype: "bool", category: "Client Connection Defaults", desc: "Enable row security."},
	{name: "jit", boot: "off", normalize: normalizeBool, vartype: "bool", category: "Query Tuning", desc: "Allow JIT compilation."},
}

// paramIndex maps a lower-cased parameter name to its definition.
//
//lint:immutable built once at init from paramDefs.
var paramIndex = func() map[string]*paramDef {
	m := make(map[string]*paramDef, len(paramDefs))
	for i := range paramDefs {
		m[strings.ToLower(paramDefs[i].name)] = &paramDefs[i]
	}
	// PostgreSQL's aliases.
	m["time zone"] = m["timezone"]
	return m
}()

// Settings is an immutable snapshot of one session's parameters. The gateway
// replaces the snapshot on every change, so the engine may keep a *Settings
// for as long as it likes (e.g. inside a session actor) without locking.
type Settings struct {
	// values holds lower-cased name → value; custom dotted parameters
	// (`SET myapp.x = ...`) live here too.
	values map[string]string
	// user and database are fixed for the session.
	user, database string
	// zoneName and zone memoize Location for the timezone value they were
	// computed from: COPY parses every field with the session zone, and
	// resolving the name each time cost more than parsing the field.
	zoneName string
	zone     *time.Location
	// styleSet, dateStyleName, intervalStyleName and the parsed styles
	// memoize DateStyle and IntervalStyle the same way: every text value
	// formatted or parsed asks for them.
	styleSet                         bool
	dateStyleName, intervalStyleName string
	dateStyle                        types.DateStyle
	dateOrder                        types.DateOrder
	intervalStyle                    types.IntervalStyle
}

// NewSettings returns the defaults for a session of user on database.
func NewSettings(user, database string) *Settings {
	s := &Settings{values: make(map[string]string, len(paramDefs)), user: user, database: database}
	for i := range paramDefs {
		s.values[strings.ToLower(paramDefs[i].name)] = paramDefs[i].boot
	}
	s.values["session_authorization"] = user
	return s
}

// clone returns a modifiable copy.
func (s *Settings) clone() *Settings {
	c := &Settings{values: make(map[string]string, len(s.values)), user: s.user, database: s.database}
	for k, v := range s.values { //lint:maprange copying a map; order cannot leak
		c.values[k] = v
	}
	return c
}

// Get returns a parameter's value by case-insensitive name.
func (s *Settings) Get(name string) (string, bool) {
	v, ok := s.values[canonicalKey(name)]
	return v, ok
}

// User is current_user / session_user.
func (s *Settings) User() string { return s.user }

// Database is current_database() / current_catalog: the namespace.
func (s *Settings) Database() string { return s.database }

// Location is the session time zone (TimeZone) as a *time.Location, for
// timestamptz input and output.
func (s *Settings) Location() *time.Location {
	name := s.values["timezone"]
	if s.zone != nil && s.zoneName == name {
		return s.zone
	}
	loc, err := loadZone(name)
	if err != nil {
		loc = time.UTC
	}
	s.zoneName, s.zone = name, loc
	return loc
}

// ExtraFloatDigits is extra_float_digits.
func (s *Settings) ExtraFloatDigits() int {
	n, err := strconv.Atoi(s.values["extra_float_digits"])
	if err != nil {
		return 1
	}
	return n
}

// DateStyle is DateStyle's output style and field order.
func (s *Settings) DateStyle() (types.DateStyle, types.DateOrder) {
	s.memoizeStyles()
	return s.dateStyle, s.dateOrder
}

// IntervalStyle is IntervalStyle.
func (s *Settings) IntervalStyle() types.IntervalStyle {
	s.memoizeStyles()
	return s.intervalStyle
}

// memoizeStyles parses DateStyle and IntervalStyle when their values are
// not the ones last parsed.
func (s *Settings) memoizeStyles() {
	ds, is := s.values["datestyle"], s.values["intervalstyle"]
	if s.styleSet && ds == s.dateStyleName && is == s.intervalStyleName {
		return
	}
	style, order, err := types.ParseDateStyle(ds, types.DateStyleISO, types.DateOrderMDY)
	if err != nil {
		style, order = types.DateStyleISO, types.DateOrderMDY
	}
	interval, err := types.ParseIntervalStyleSetting(is)
	if err != nil {
		interval = types.IntervalStylePostgres
	}
	s.styleSet, s.dateStyleName, s.intervalStyleName = true, ds, is
	s.dateStyle, s.dateOrder, s.intervalStyle = style, order, interval
}

// OutputStyle is what the session's settings make of a value's text form
// (TimeZone, extra_float_digits, DateStyle, IntervalStyle).
func (s *Settings) OutputStyle() types.OutputStyle {
	style, order := s.DateStyle()
	return types.OutputStyle{Loc: s.Location(), ExtraFloatDigits: s.ExtraFloatDigits(), DateStyle: style, DateOrder: order, IntervalStyle: s.IntervalStyle()}
}

// InputStyle is what the session's settings make of a value's text input
// (TimeZone, DateStyle's field order, IntervalStyle).
func (s *Settings) InputStyle() types.InputStyle {
	_, order := s.DateStyle()
	return types.InputStyle{Loc: s.Location(), DateOrder: order, IntervalStyle: s.IntervalStyle()}
}

// StatementTimeout is statement_timeout (0 = none).
func (s *Settings) StatementTimeout() time.Duration {
	ms, err := strconv.ParseInt(s.values["statement_timeout"], 10, 64)
	if err != nil {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// SearchPath is search_path split into schema names, with "$user" kept as
// written (current_schemas resolves it).
func (s *Settings) SearchPath() []string {
	var out []string
	for _, part := range splitList(s.values["search_path"]) {
		out = append(out, part)
	}
	return out
}

// CurrentSetting implements current_setting(name [, missing_ok]).
func (s *Settings) CurrentSetting(name string, missingOK bool) (string, bool, error) {
	if v, ok := s.Get(name); ok {
		return v, true, nil
	}
	if missingOK {
		return "", false, nil
	}
	return "", false, errcode.New(errcode.UnknownParameter, "unrecognized configuration parameter %q", name)
}

// CurrentSchema implements current_schema(): the first schema of the search
// path (RockStream has no per-user schemas, so "$user" is skipped).
func (s *Settings) CurrentSchema() string {
	for _, schema := range s.SearchPath() {
		if schema != "$user" {
			return schema
		}
	}
	return ""
}

// CurrentSchemas implements current_schemas(include_implicit): the search
// path with pg_catalog first when includeImplicit.
func (s *Settings) CurrentSchemas(includeImplicit bool) []string {
	var out []string
	if includeImplicit {
		out = append(out, "pg_catalog")
	}
	for _, schema := range s.SearchPath() {
		if schema == "$user" || (schema == "pg_catalog" && includeImplicit) {
			continue
		}
		out = append(out, schema)
	}
	return out
}

// Version implements version().
func (s *Settings) Version() string { return version.Full }

// SettingRow is one row of SHOW ALL and pg_settings.
type SettingRow struct {
	Name, Setting, Category, ShortDesc, Vartype, Context, BootVal string
}

// All returns SHOW ALL's rows sorted by name (the engine builds the
// pg_settings virtual table from it).
func (s *Settings) All() []SettingRow {
	rows := make([]SettingRow, 0, len(paramDefs))
	for i := range paramDefs {
		def := &paramDefs[i]
		context := "user"
		if def.readOnly {
			context = "internal"
		}
		rows = append(rows, SettingRow{
			Name: def.name, Setting: s.values[strings.ToLower(def.name)], Category: def.category,
			ShortDesc: def.desc, Vartype: def.vartype, Context: context, BootVal: def.boot,
		})
	}
	sort.Slice(rows, func(i, j int) bool { return strings.ToLower(rows[i].Name) < strings.ToLower(rows[j].Name) })
	return rows
}

// canonicalKey lower-cases a parameter name and maps aliases.
func canonicalKey(name string) string {
	k := strings.ToLower(strings.TrimSpace(name))
	switch k {
	case "time zone":
		return "timezone"
	case "transaction isolation level":
		return "transaction_isolation"
	case "session authorization":
		return "session_authorization"
	}
	return k
}

// displayName is the name SHOW uses as its column name.
func displayName(name string) string {
	if def, ok := paramIndex[canonicalKey(name)]; ok {
		return strings.ToLower(def.name)
	}
	return canonicalKey(name)
}

// set validates and applies SET name = value, returning the new snapshot.
func (s *Settings) set(name, value string) (*Settings, error) {
	key := canonicalKey(name)
	def, ok := paramIndex[key]
	if !ok {
		if strings.Contains(key, ".") {
			// Custom (placeholder) parameters, as PostgreSQL allows.
			c := s.clone()
			c.values[key] = value
			return c, nil
		}
		return nil, errcode.New(errcode.UnknownParameter, "unrecognized configuration parameter %q", name)
	}
	if def.readOnly {
		if strings.EqualFold(value, s.values[key]) {
			return s, nil
		}
		return nil, errcode.New(errcode.InvalidParameterValue, "parameter %q cannot be changed", def.name).WithSQLState("55P02")
	}
	var normalized string
	var err error
	if key == "datestyle" {
		// What the value leaves out keeps its current setting.
		normalized, err = normalizeDateStyleFrom(value, s.values[key])
	} else {
		normalized, err = def.normalize(value)
	}
	if e, ok := errcode.As(err); ok {
		return nil, e
	}
	if err != nil {
		return nil, errcode.New(errcode.InvalidParameterValue, "invalid value for parameter %q: %q", def.name, value).WithDetail("%v", err)
	}
	c := s.clone()
	c.values[key] = normalized
	return c, nil
}

// reset returns RESET name's snapshot (the value at session start).
func (s *Settings) reset(name string, startup *Settings) (*Settings, error) {
	key := canonicalKey(name)
	def, ok := paramIndex[key]
	if !ok {
		if strings.Contains(key, ".") {
			c := s.clone()
			delete(c.values, key)
			return c, nil
		}
		return nil, errcode.New(errcode.UnknownParameter, "unrecognized configuration parameter %q", name)
	}
	if def.readOnly {
		return nil, errcode.New(errcode.InvalidParameterValue, "parameter %q cannot be changed", def.name).WithSQLState("55P02")
	}
	c := s.clone()
	c.values[key] = startup.values[key]
	return c, nil
}

// reportedChanges lists the reported parameters whose value differs between
// two snapshots, sorted, for ParameterStatus messages.
func reportedChanges(before, after *Settings) []paramDef {
	var out []paramDef
	for i := range paramDefs {
		def := paramDefs[i]
		key := strings.ToLower(def.name)
		if def.reported && before.values[key] != after.values[key] {
			out = append(out, def)
		}
	}
	return out
}

func normalizeAny(v string) (string, error) { return v, nil }

func normalizeEnum(allowed ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		lv := strings.ToLower(strings.TrimSpace(v))
		for _, a := range allowed {
			if lv == a {
				return a, nil
			}
		}
		return "", fmt.Errorf("available values: %s", strings.Join(allowed, ", "))
	}
}

func normalizeBool(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on", "true", "yes", "1", "t", "y":
		return "on", nil
	case "off", "false", "no", "0", "f", "n":
		return "off", nil
	}
	return "", fmt.Errorf("requires a Boolean value")
}

func normalizeIntRange(low, high int) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return "", fmt.Errorf("requires an integer value")
		}
		if n < low || n > high {
			return "", fmt.Errorf("%d is outside the valid range (%d .. %d)", n, low, high)
		}
		return strconv.Itoa(n), nil
	}
}

// normalizeDuration accepts milliseconds or a number with a unit
// (ms, s, min, h, d) and returns milliseconds.
func normalizeDuration(v string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(v))
	units := []struct {
		suffix string
		ms     int64
	}{{"ms", 1}, {"min", 60000}, {"s", 1000}, {"h", 3600000}, {"d", 86400000}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t = strings.TrimSpace(strings.TrimSuffix(t, u.suffix))
			mult = u.ms
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 {
		return "", fmt.Errorf("requires a non-negative duration such as 5000, 5s or 1min")
	}
	return strconv.FormatInt(n*mult, 10), nil
}

func normalizeEncoding(v string) (string, error) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), "'")) {
	case "utf8", "utf-8", "unicode":
		return "UTF8", nil
	}
	return "", fmt.Errorf("only UTF8 is supported")
}

func normalizeIsolation(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "read committed", "read uncommitted":
		return "read committed", nil
	case "repeatable read":
		return "repeatable read", nil
	case "serializable":
		return "", errcode.New(errcode.SerializableNotSupported, "SERIALIZABLE isolation is not supported")
	}
	return "", fmt.Errorf("available values: read committed, repeatable read")
}

// normalizeDateStyle reads a DateStyle value from the default, ISO, MDY.
func normalizeDateStyle(v string) (string, error) { return normalizeDateStyleFrom(v, "ISO, MDY") }

// normalizeDateStyleFrom reads a DateStyle value as PostgreSQL does: an
// output style (ISO, SQL, Postgres, German) and/or a field order (MDY,
// DMY, YMD and their aliases); what it leaves out keeps its value in
// current ("SET DateStyle = DMY" keeps the output style).
func normalizeDateStyleFrom(v, current string) (string, error) {
	curStyle, curOrder, err := types.ParseDateStyle(current, types.DateStyleISO, types.DateOrderMDY)
	if err != nil {
		curStyle, curOrder = types.DateStyleISO, types.DateOrderMDY
	}
	style, order, err := types.ParseDateStyle(v, curStyle, curOrder)
	if err != nil {
		return "", err
	}
	return types.DateStyleSetting(style, order), nil
}

func normalizeTimeZone(v string) (string, error) {
	name := strings.TrimSpace(v)
	if name == "" {
		return "", fmt.Errorf("time zone must not be empty")
	}
	if strings.EqualFold(name, "local") || strings.EqualFold(name, "default") {
		return "Etc/UTC", nil
	}
	if _, err := loadZone(name); err != nil {
		return "", err
	}
	return types.NormalizeZone(name)
}

// loadZone resolves a TimeZone value as types.LoadZone does: a number is
// hours east of Greenwich (SET TIME ZONE 2), a POSIX string's offset counts
// west ('+05:30' is behind UTC), or an IANA name.
func loadZone(name string) (*time.Location, error) {
	zoneCacheMu.Lock()
	defer zoneCacheMu.Unlock()
	if loc, ok := zoneCache[name]; ok {
		return loc, nil
	}
	loc, err := types.LoadZone(name)
	if err != nil {
		return nil, err
	}
	// NB: bounded by the number of distinct zone names sessions set; the
	// tz database has a few hundred.
	if len(zoneCache) < zoneCacheEntriesMax {
		zoneCache[name] = loc
	}
	return loc, nil
}

// zoneCache keeps loaded time zones: time.LoadLocation reads the tz
// database from disk on every call, and Location() is called per COPY row
// and per statement.
var (
	zoneCacheMu sync.Mutex
	zoneCache   = map[string]*time.Location{}
)

// zoneCacheEntriesMax bounds the zone cache (the tz database has ~600 names).
const zoneCacheEntriesMax = 1024

// splitList splits a comma-separated GUC list, honouring double quotes.
func splitList(v string) []string {
	var out []string
	var cur strings.Builder
	inQuote := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			inQuote = !inQuote
		case c == ',' && !inQuote:
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if t := strings.TrimSpace(cur.String()); t != "" || len(out) > 0 {
		out = append(out, t)
	}
	return out
}
