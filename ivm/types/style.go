package types

import (
	"fmt"
	"strings"
	"time"
)

// DateStyle is the output format half of PostgreSQL's DateStyle setting.
// The zero value is ISO, PostgreSQL's default.
type DateStyle uint8

const (
	DateStyleISO      DateStyle = iota // 2024-01-02 10:00:00+00
	DateStyleSQL                       // 01/02/2024 10:00:00 UTC
	DateStylePostgres                  // Tue Jan 02 10:00:00 2024 UTC
	DateStyleGerman                    // 02.01.2024 10:00:00 UTC
)

// DateOrder is the field order half of DateStyle: how ambiguous numeric
// dates ('01/02/03') are read, and the day/month order of the SQL and
// Postgres output styles. The zero value is MDY, PostgreSQL's default.
type DateOrder uint8

const (
	DateOrderMDY DateOrder = iota
	DateOrderDMY
	DateOrderYMD
)

// IntervalStyle is PostgreSQL's IntervalStyle setting. The zero value is
// postgres, PostgreSQL's default.
type IntervalStyle uint8

const (
	IntervalStylePostgres        IntervalStyle = iota // 1 year 2 mons 3 days 04:05:06
	IntervalStylePostgresVerbose                      // @ 1 year 2 mons 3 days 4 hours 5 mins 6 secs
	IntervalStyleSQLStandard                          // +1-2 +3 +4:05:06
	IntervalStyleISO8601                              // P1Y2M3DT4H5M6S
)

// intervalStyleNames are the IntervalStyle values in PostgreSQL's order.
//
//lint:immutable a constant table.
var intervalStyleNames = []string{"postgres", "postgres_verbose", "sql_standard", "iso_8601"}

// String is the setting's value as SHOW prints it.
func (s IntervalStyle) String() string { return intervalStyleNames[s] }

// ParseIntervalStyleSetting reads an IntervalStyle value (case-insensitive).
func ParseIntervalStyleSetting(v string) (IntervalStyle, error) {
	lv := strings.ToLower(strings.TrimSpace(v))
	for i, name := range intervalStyleNames {
		if lv == name {
			return IntervalStyle(i), nil
		}
	}
	return 0, fmt.Errorf("available values: %s", strings.Join(intervalStyleNames, ", "))
}

// DateStyleSetting is DateStyle's output style and field order, as SHOW
// prints them ("ISO, MDY", "German, DMY").
func DateStyleSetting(style DateStyle, order DateOrder) string {
	var b strings.Builder
	switch style {
	case DateStyleSQL:
		b.WriteString("SQL")
	case DateStylePostgres:
		b.WriteString("Postgres")
	case DateStyleGerman:
		b.WriteString("German")
	default:
		b.WriteString("ISO")
	}
	switch order {
	case DateOrderDMY:
		b.WriteString(", DMY")
	case DateOrderYMD:
		b.WriteString(", YMD")
	default:
		b.WriteString(", MDY")
	}
	return b.String()
}

// ParseDateStyle reads a DateStyle value as PostgreSQL's check_datestyle
// does: a comma-separated list of at most one output style (ISO, SQL,
// Postgres, German) and one field order (MDY/US/NonEuro, DMY/Euro, YMD),
// or DEFAULT (ISO, MDY). What the value leaves out keeps its current
// setting, except that German alone also sets DMY.
func ParseDateStyle(v string, curStyle DateStyle, curOrder DateOrder) (DateStyle, DateOrder, error) {
	style, order := curStyle, curOrder
	haveStyle, haveOrder := false, false
	conflict := false
	setStyle := func(s DateStyle) {
		if haveStyle && style != s {
			conflict = true
		}
		style, haveStyle = s, true
	}
	setOrder := func(o DateOrder) {
		if haveOrder && order != o {
			conflict = true
		}
		order, haveOrder = o, true
	}
	if strings.TrimSpace(v) == "" {
		return style, order, nil
	}
	parts := strings.Split(v, ",")
	for _, part := range parts {
		tok := strings.TrimSpace(part)
		if tok == "" || strings.ContainsAny(tok, " \t\n") {
			return 0, 0, fmt.Errorf("List syntax is invalid.")
		}
		switch strings.ToUpper(tok) {
		case "ISO":
			setStyle(DateStyleISO)
		case "SQL":
			setStyle(DateStyleSQL)
		case "POSTGRES":
			setStyle(DateStylePostgres)
		case "GERMAN":
			setStyle(DateStyleGerman)
			if !haveOrder {
				order = DateOrderDMY
			}
		case "YMD":
			setOrder(DateOrderYMD)
		case "DMY", "EURO", "EUROPEAN":
			setOrder(DateOrderDMY)
		case "US", "NONEURO", "NONEUROPEAN", "MDY":
			setOrder(DateOrderMDY)
		case "DEFAULT":
			// Fills in what the list has not named yet (check_datestyle
			// parses the boot value, ISO, MDY, for it).
			if !haveStyle {
				style = DateStyleISO
			}
			if !haveOrder {
				order = DateOrderMDY
			}
			haveStyle, haveOrder = true, true
		default:
			return 0, 0, fmt.Errorf("Unrecognized key word: %q.", tok)
		}
	}
	if conflict {
		return 0, 0, fmt.Errorf("Conflicting \"datestyle\" specifications.")
	}
	return style, order, nil
}

// InputStyle is what reading a value's text form depends on besides the
// text: the session's TimeZone (timestamptz without an offset), the field
// order of DateStyle (ambiguous numeric dates) and IntervalStyle (under
// sql_standard a leading minus applies to every field of an interval).
type InputStyle struct {
	Loc           *time.Location
	DateOrder     DateOrder
	IntervalStyle IntervalStyle
}
