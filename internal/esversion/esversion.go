// Package esversion reads Elasticsearch version numbers, for the stand-in (which behaves by the
// version it claims) and the setup command (which checks what a mapping needs).
package esversion

import (
	"strconv"
	"strings"
)

// Parse returns the major and minor numbers of a version such as "8.13.4" (0 where unparsable).
func Parse(v string) (major, minor int) {
	parts := strings.SplitN(v, ".", 3)
	major, _ = strconv.Atoi(parts[0])
	if len(parts) > 1 {
		minor, _ = strconv.Atoi(parts[1])
	}
	return major, minor
}

// AtLeast reports whether v is major.minor or later.
func AtLeast(v string, major, minor int) bool {
	ma, mi := Parse(v)
	return ma > major || (ma == major && mi >= minor)
}
