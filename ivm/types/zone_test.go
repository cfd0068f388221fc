package types

import (
	"testing"
	"time"
)

// TestLoadZoneSigns: SET TIME ZONE's numbers and INTERVALs are east of
// Greenwich, its other strings POSIX zones counted west (checked against
// PostgreSQL 15 by engine's TestTimeZoneSpellingsMatchPostgres).
func TestLoadZoneSigns(t *testing.T) {
	winter := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	summer := time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name, canon    string
		winter, summer int // seconds east
	}{
		{"+05:30", "+05:30", -19800, -19800},
		{"-05:30", "-05:30", 19800, 19800},
		{"5", "<+05>-05", 18000, 18000},
		{"-3", "<-03>+03", -10800, -10800},
		{"5.5", "<+05:30>-05:30", 19800, 19800},
		{"+05", "<+05>-05", 18000, 18000},
		{"utc+5", "UTC+5", -18000, -18000},
		{"<+03>-3", "<+03>-3", 10800, 10800},
		{"FOO+3BAR", "FOO+3BAR", -10800, -7200},
		{"AAA3BBB,M3.2.0/2,M11.1.0/2", "AAA3BBB,M3.2.0/2,M11.1.0/2", -10800, -7200},
		{"INTERVAL '+05:30' hour to minute", "<+05:30>-05:30", 19800, 19800},
		{"INTERVAL '5' hour to minute", "<+00:05>-00:05", 300, 300},
		{"INTERVAL '05:30:15'", "<+05:30:15>-05:30:15", 19815, 19815},
	} {
		canon, err := NormalizeZone(c.name)
		if err != nil || canon != c.canon {
			t.Errorf("NormalizeZone(%q) = %q, %v; want %q", c.name, canon, err, c.canon)
			continue
		}
		for _, name := range []string{c.name, canon} {
			loc, err := LoadZone(name)
			if err != nil {
				t.Errorf("LoadZone(%q): %v", name, err)
				continue
			}
			if _, w := winter.In(loc).Zone(); w != c.winter {
				t.Errorf("LoadZone(%q) in winter: %d east, want %d", name, w, c.winter)
			}
			if _, s := summer.In(loc).Zone(); s != c.summer {
				t.Errorf("LoadZone(%q) in summer: %d east, want %d", name, s, c.summer)
			}
		}
	}
	for _, bad := range []string{"+0530", "+168", "-05:30:15", "XYZ", "AAA3BBB,M13.2.0,M11.1.0", "INTERVAL '1 day'", "<+03", "Local"} {
		if canon, err := NormalizeZone(bad); err == nil {
			t.Errorf("NormalizeZone(%q) = %q, want an error", bad, canon)
		}
	}
}
