package elasticapmreceiver

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestUTF8Reader(t *testing.T) {
	long := strings.Repeat("é€😀a", utf8ReadSize/5) // runes cut at every read boundary
	for _, tc := range []struct {
		name    string
		in      string
		wantErr string // "" for a valid body
		wantOut string // what comes through before the error
	}{
		{"empty", "", "", ""},
		{"ascii", `{"a":"b"}`, "", `{"a":"b"}`},
		{"multibyte", long, "", long},
		{"invalid byte", "ab\xffcd", "invalid UTF-8 at byte 2 of the body", "ab"},
		{"invalid late", long + "\xfe", "invalid UTF-8 at byte", long},
		{"rune cut at the end", "ab\xe2\x82", "invalid UTF-8 at byte 2 of the body", "ab"},
		{"surrogate half", "a\xed\xa0\x80", "invalid UTF-8 at byte 1 of the body", "a"},
	} {
		for _, mode := range []string{"whole", "one byte at a time"} {
			t.Run(tc.name+"/"+mode, func(t *testing.T) {
				var src io.Reader = strings.NewReader(tc.in)
				if mode != "whole" {
					src = iotest.OneByteReader(src)
				}
				out, err := io.ReadAll(iotest.OneByteReader(newUTF8Reader(src)))
				if tc.wantErr == "" {
					require.NoError(t, err)
				} else {
					require.ErrorContains(t, err, tc.wantErr)
				}
				assert.True(t, bytes.Equal([]byte(tc.wantOut), out), "got %d bytes, want %d", len(out), len(tc.wantOut))
			})
		}
	}
}
