package docscheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

const root = "../.."

// The README is the front door and benchmarks.md a document, not a notebook: past these sizes
// they have grown into what belongs elsewhere (or in git's history).
const (
	readmeMaxBytes     = 25000
	benchmarksMaxBytes = 30000
	benchmarksMaxLine  = 600
)

func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDocumentSizes fails when README.md or docs/benchmarks.md outgrows its limit, or a line of
// docs/benchmarks.md is longer than a table row needs to be.
func TestDocumentSizes(t *testing.T) {
	if n := len(readDoc(t, "README.md")); n > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, over %d: keep it the front door (what it is, first commands, ports, running, configuring) "+
			"and move a long section to a document under docs/, leaving a short paragraph and a link", n, readmeMaxBytes)
	}
	bench := readDoc(t, "docs/benchmarks.md")
	if n := len(bench); n > benchmarksMaxBytes {
		t.Errorf("docs/benchmarks.md is %d bytes, over %d: replace a measure's row with the current figure instead of adding runs "+
			"(git keeps the old ones), drop superseded runs and experiments that changed nothing, and move a decision to docs/design.md; "+
			"a generated section that grew is bench/benchrun's to shorten", n, benchmarksMaxBytes)
	}
	for i, line := range strings.Split(bench, "\n") {
		if n := utf8.RuneCountInString(line); n > benchmarksMaxLine {
			t.Errorf("docs/benchmarks.md:%d has %d characters, over %d: one current figure and its command per row, "+
				"not every run of the week (git keeps them)", i+1, n, benchmarksMaxLine)
		}
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocumentLinks: every relative link of README.md, DEVELOPERS.md and docs/*.md names a file or
// directory that exists, so a document moved or renamed cannot leave links into nothing.
func TestDocumentLinks(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(root, "README.md"), filepath.Join(root, "DEVELOPERS.md"))
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), target)); err != nil {
				rel, _ := filepath.Rel(root, doc)
				t.Errorf("%s links to %s, which does not exist", rel, m[1])
			}
		}
	}
}
