// Splitting a request's stream between two decoders: spans go to spanjson, which reads the common
// ones for a fraction of apm-data's cost; every other line (the metadata first, then what spanjson
// declines) goes to apm-data, in the order it came, so that its answers (errors, limits) are the
// ones APM Server gives.

package elasticapmreceiver

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/elastic/apm-data/model/modelpb"

	"github.com/tracegate/tracegate/receiver/elasticapmreceiver/internal/spanjson"
)

// maxHeldBytes bounds the lines held for apm-data while a request is split: past it, apm-data
// reads the rest of the stream itself, as it would have without spanjson.
const maxHeldBytes = 1 << 20

// splitStream is a request's stream, split.
type splitStream struct {
	// spans are the events spanjson decoded, without the request's metadata (see spanjson.Attach).
	spans []spanjson.Event
	// forAPMData is what apm-data must read: the held lines, the first of them the metadata
	// followed by spanjson.MetadataCarrier, then whatever of the body split left unread.
	forAPMData io.Reader
	// metadata is the metadata line as sent, without its newline (a view of the held lines).
	metadata []byte
	// onlyMetadata says that apm-data has nothing to read but the metadata and its carrier.
	onlyMetadata bool
}

// split reads body line by line, holding for apm-data every line spanjson does not decode. A line
// longer than the reader's buffer (max_event_size) or a read error stops the split there, and
// apm-data meets them as it would have.
func split(body *bufio.Reader, held *bytes.Buffer) splitStream {
	var st splitStream
	if body.Size() < 2*len(spanjson.MetadataCarrier) {
		// max_event_size too small for the carrier: apm-data reads the stream alone.
		st.forAPMData = body
		return st
	}
	var lines spanjson.Decoder
	heldEvents := false
	for first := true; ; first = false {
		line, err := body.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			held.Write(line)
			st.forAPMData = io.MultiReader(held, body)
			return st
		case err != nil && !errors.Is(err, io.EOF):
			held.Write(line)
			st.forAPMData = io.MultiReader(held, errorReader{err})
			return st
		}
		switch {
		case first && errors.Is(err, io.EOF):
			// An empty body (accepted as no events), or a stream that ends in its metadata line
			// (refused): apm-data answers both.
			held.Write(line)
			st.forAPMData = held
			return st
		case first:
			metadata := bytes.TrimSuffix(line, []byte("\n"))
			held.Write(metadata)
			held.WriteByte('\n')
			st.metadata = held.Bytes()[:len(metadata)]
			held.Write(spanjson.MetadataCarrier)
		case len(line) == 0 || len(line) == 1 && line[0] == '\n':
			// nothing, or an empty line, which apm-data skips
		default:
			if e, ok := lines.Decode(line); ok {
				st.spans = append(st.spans, e)
			} else {
				held.Write(line)
				heldEvents = true
			}
		}
		if errors.Is(err, io.EOF) {
			st.forAPMData, st.onlyMetadata = held, !heldEvents
			return st
		}
		if held.Len() > maxHeldBytes {
			st.forAPMData = io.MultiReader(held, body)
			return st
		}
	}
}

// errorReader repeats the error that stopped the split, for apm-data to meet where it would have.
type errorReader struct{ err error }

func (r errorReader) Read([]byte) (int, error) { return 0, r.err }

// carriedMetadata takes the carrier out of apm-data's first batch: the event holding the
// request's metadata. The carrier is always the first event after a valid metadata line.
func carriedMetadata(b *modelpb.Batch) (*modelpb.APMEvent, error) {
	base := (*b)[0]
	if base.GetTransaction().GetType() != "carrier" {
		return nil, errors.New("the metadata carrier is missing from the decoded stream")
	}
	*b = (*b)[1:]
	return base, nil
}
