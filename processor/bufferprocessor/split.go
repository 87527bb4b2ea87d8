package bufferprocessor

// splitParts is splitBySize for a delivery's batch: the parts hold data's reference (the last) and
// references of their own (the others), all given back when the delivery is over (see batch.go).
func (p *bufferProcessor[T]) splitParts(data batch[T], maxBytes int) []batch[T] {
	cut := p.splitBySize(data.data, maxBytes)
	parts := make([]batch[T], len(cut))
	for i, c := range cut {
		parts[i] = batch[T]{form: formDecoded, data: c, items: p.sig.items(c)}
	}
	return parts
}

// splitBySize cuts data into parts of at most maxBytes serialized bytes each, in order, each with
// its items' resource and scope. A part of one item (a span, a log record, a whole metric) may
// still be larger. data itself becomes the last part (its leading items move out); the others are
// new batches, owned by the buffer, each with its reference (refs.split). It halves by
// item count until every part fits: a few size computations for the rare batch that needs it,
// whatever the items' sizes. The cut is made once per delivery: its retries send the same parts.
func (p *bufferProcessor[T]) splitBySize(data T, maxBytes int) []T {
	n := p.sig.items(data)
	if n <= 1 || p.sig.size(data) <= maxBytes {
		return []T{data}
	}
	head := p.refs().split(data, int(n/2))
	if p.sig.items(data) == 0 { // one metric holds every data point: it cannot be cut
		p.sig.moveAll(head, data)
		p.refs().releaseData(head)
		return []T{data}
	}
	return append(p.splitBySize(head, maxBytes), p.splitBySize(data, maxBytes)...)
}

// mergeParts returns the parts as one batch: the part itself when there is one, else a new batch
// (with its reference) the parts' contents move into, or are copied into when a part is read-only
// (the collector's fanout marks a batch it offered to several consumers so).
func (p *bufferProcessor[T]) mergeParts(parts []T) T {
	if len(parts) == 1 {
		return parts[0]
	}
	out := p.refs().newOwned()
	for _, part := range parts {
		if p.sig.readOnly(part) {
			p.sig.copyAll(part, out)
			continue
		}
		p.sig.moveAll(part, out)
	}
	return out
}
