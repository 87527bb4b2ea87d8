//go:generate go tool -modfile=../../internal/tools/go.mod mdatagen metadata.yaml

// Package readylogextension logs one line once every pipeline has started (every receiver
// listens): the endpoints the receivers listen on and how each buffer keeps what it holds, at a
// level the production configs show. The collector's own "Everything is ready" line is at info,
// below the warn level tracegate's configs run at. See README.md.
package readylogextension
