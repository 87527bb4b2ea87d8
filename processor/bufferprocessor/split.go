package bufferprocessor

// splitBySize cuts data into parts of at most maxBytes serialized bytes each, in order, each with
// its items' resource and scope. A part of one item (a span, a log record, a whole metric) may
// still be larger. data itself becomes the last part (its leading items move out); the others are
// new batches, owned by the buffer (see assemble) and given back by releaseParts. It halves by
// item count until every part fits: a few size computations for the rare batch that needs it,
// whatever the items' sizes. The cut is made once per delivery: its retries send the same parts.
func (p *bufferProcessor[T]) splitBySize(data T, maxBytes int) []T {
	n := p.sig.items(data)
	if n <= 1 || p.sig.size(data) <= maxBytes {
		return []T{data}
	}
	head := p.sig.moveLeading(data, int(n/2))
	if p.sig.items(data) == 0 { // one metric holds every data point: it cannot be cut
		p.sig.moveAll(head, data)
		p.sig.unref(head)
		return []T{data}
	}
	return append(p.splitBySize(head, maxBytes), p.splitBySize(data, maxBytes)...)
}

// mergeParts returns the parts as one batch: the part itself when there is one, else a new batch
// the parts' contents move into, or are copied into when a part is read-only (the collector's
// fanout marks a batch it offered to several consumers so).
func (p *bufferProcessor[T]) mergeParts(parts []T) T {
	if len(parts) == 1 {
		return parts[0]
	}
	out := p.sig.newOwned()
	for _, part := range parts {
		if p.sig.readOnly(part) {
			p.sig.copyAll(part, out)
			continue
		}
		p.sig.moveAll(part, out)
	}
	return out
}

// releaseParts gives back the references of the parts splitBySize made (data, the last part, is
// the delivery's and released with it).
func (p *bufferProcessor[T]) releaseParts(parts []T, data T) {
	for _, part := range parts {
		if part != data {
			p.sig.unref(part)
		}
	}
}
