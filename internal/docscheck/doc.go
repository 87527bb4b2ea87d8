// Package docscheck holds the tests that keep the repository's documents within their limits
// and their relative links pointing at files that exist.
package docscheck
