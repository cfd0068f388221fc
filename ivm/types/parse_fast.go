package types

// fastISO parses the canonical forms "YYYY-MM-DD" and
// "YYYY-MM-DD HH:MM:SS[.f{1,6}]" (space or T) without the general
// tokenizer, which dominates COPY and text-protocol input. It reports
// ok=false for anything else (including zones, BC and out-of-range fields),
// leaving the general parser to decide, so results and errors are
// unchanged.
func fastISO(s string) (f dtFields, ok bool) {
	d2 := func(i int) (int, bool) {
		a, b := s[i], s[i+1]
		if a < '0' || a > '9' || b < '0' || b > '9' {
			return 0, false
		}
		return int(a-'0')*10 + int(b-'0'), true
	}
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return f, false
	}
	y1, ok1 := d2(0)
	y2, ok2 := d2(2)
	m, ok3 := d2(5)
	d, ok4 := d2(8)
	if !(ok1 && ok2 && ok3 && ok4) {
		return f, false
	}
	f.year, f.month, f.day, f.hasDate = y1*100+y2, m, d, true
	if f.year == 0 || m < 1 || m > 12 || d < 1 || d > DaysInMonth(f.year, m) {
		return f, false
	}
	if len(s) == 10 {
		return f, true
	}
	if len(s) < 19 || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return f, false
	}
	h, ok1 := d2(11)
	mi, ok2 := d2(14)
	sec, ok3 := d2(17)
	if !(ok1 && ok2 && ok3) || h > 23 || mi > 59 || sec > 59 {
		return f, false
	}
	f.hour, f.minute, f.sec, f.hasTime = h, mi, sec, true
	if len(s) == 19 {
		return f, true
	}
	if s[19] != '.' || len(s) == 20 || len(s) > 26 {
		return f, false
	}
	var us int64
	for i := 20; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return f, false
		}
		us = us*10 + int64(c-'0')
	}
	for i := len(s); i < 26; i++ {
		us *= 10
	}
	f.micros = us
	return f, true
}
