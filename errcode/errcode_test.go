package errcode

import (
	"regexp"
	"strconv"
	"testing"
)

// TestRegistry enforces spec §14.14: unique codes, inside a reserved range,
// a SQLSTATE of five characters, a slug, and non-empty next steps.
func TestRegistry(t *testing.T) {
	idPattern := regexp.MustCompile(`^RS-(\d{4})$`)
	statePattern := regexp.MustCompile(`^[0-9A-Z]{5}$`)
	slugs := map[string]string{}
	codes := All()
	if len(codes) == 0 {
		t.Fatal("no codes registered")
	}
	for _, c := range codes {
		m := idPattern.FindStringSubmatch(c.ID)
		if m == nil {
			t.Errorf("%s: id must look like RS-1234", c.ID)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		inRange := false
		for _, r := range Ranges {
			if n >= r.Low && n <= r.High {
				inRange = true
			}
		}
		if !inRange {
			t.Errorf("%s: outside every reserved range", c.ID)
		}
		if !statePattern.MatchString(c.SQLState) {
			t.Errorf("%s: SQLSTATE %q is not five characters", c.ID, c.SQLState)
		}
		if c.Slug == "" || c.NextSteps == "" {
			t.Errorf("%s: slug and next steps are required", c.ID)
		}
		if other, dup := slugs[c.Slug]; dup {
			t.Errorf("%s: slug %q already used by %s", c.ID, c.Slug, other)
		}
		slugs[c.Slug] = c.ID
	}
}
