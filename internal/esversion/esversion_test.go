package esversion

import "testing"

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		v            string
		major, minor int
		atLeast812   bool
	}{
		{"8.13.4", 8, 13, true},
		{"8.12.0", 8, 12, true},
		{"8.11.4", 8, 11, false},
		{"9.0.0", 9, 0, true},
		{"7.17.25", 7, 17, false},
		{"8", 8, 0, false},
		{"", 0, 0, false},
	} {
		major, minor := Parse(tt.v)
		if major != tt.major || minor != tt.minor || AtLeast(tt.v, 8, 12) != tt.atLeast812 {
			t.Errorf("%q: %d.%d, AtLeast(8.12) %v", tt.v, major, minor, AtLeast(tt.v, 8, 12))
		}
	}
}
