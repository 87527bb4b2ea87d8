package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// A results file is JSON Lines: the report's header (every field but the runs) on the first line,
// then one line per run, so a diff shows which runs changed and the file stays small.

// encodeResults returns rep in the results file format.
func encodeResults(rep *report) ([]byte, error) {
	header := *rep
	header.Runs = nil
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if err := enc.Encode(&header); err != nil {
		return nil, err
	}
	for i := range rep.Runs {
		if err := enc.Encode(&rep.Runs[i]); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// loadReport reads a results file written by encodeResults.
func loadReport(path string) (*report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20) // a run's line holds its per-second timeline
	var rep report
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if n == 1 {
			err = json.Unmarshal(sc.Bytes(), &rep)
		} else {
			var r run
			if err = json.Unmarshal(sc.Bytes(), &r); err == nil {
				rep.Runs = append(rep.Runs, r)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &rep, nil
}
