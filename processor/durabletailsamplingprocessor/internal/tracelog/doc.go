// Package tracelog is the write-ahead log that makes the durable tail-sampling processor's
// pending traces survive a crash. Each request's spans are appended (and, per FsyncMode, synced)
// before the client is answered; after a restart, Open replays the log so that the processor can
// rebuild the traces still waiting for a decision. Records are opaque payloads tagged with a
// kind byte: the processor marshals spans and "trace done" records itself.
//
// # Lifecycle
//
//  1. Open replays every existing segment in ascending order, then starts a new segment: old
//     segments are never appended to again. Open deletes nothing.
//  2. The processor calls Ref once for each replayed segment holding data of a trace it kept,
//     then ReleaseUnreferenced, which deletes every old segment nobody referenced. (Open cannot do
//     this itself: the replay callback has no *Log to Ref with.)
//  3. Append writes records and says which segment took them; Ref and Unref count the pending
//     traces holding data in each segment. A segment that is not the current one is deleted when
//     its count returns to zero, and a segment rotated away with a count of zero is deleted at
//     rotation. The current segment is never deleted.
//  4. Close syncs and closes. It deletes nothing, and neither do Unref calls made after it:
//     traces still pending at shutdown must be replayed at the next start.
//
// A segment can be deleted between an Append that returned it and the caller's Ref (by a
// concurrent rotation or by another trace's Unref), losing the record from disk. The caller must
// therefore make Append and the Ref that follows it atomic with respect to its other Appends and
// Unrefs, for example by holding its own lock across them; Sync can run outside that lock.
//
// # File format
//
// A segment is a file named "%020d.tlog" after its SegmentID (ids ascend in creation order).
// It starts with an 8-byte header, then holds records back to back:
//
//	header: "TGTL" magic, version byte 1, three zero bytes
//	record: payload length  uint32, little endian (at most MaxRecordBytes)
//	        CRC-32C         uint32, little endian, Castagnoli polynomial, over kind and payload
//	        kind            1 byte, never 0
//	        payload         length bytes
//
// # Damage
//
// Replay checks every record before handing it on: a short header, a length above
// MaxRecordBytes or above what remains of the file, a kind of 0 or a CRC mismatch ends the replay
// of that segment. The rest of it is skipped and counted in Report (a write torn by a crash looks
// like this); later segments are still replayed. A file named like a segment whose header is
// wrong (another magic, another version, fewer than 8 bytes) is skipped whole and counted too.
// It stays in place through Open but, being named as ours and unreadable, it counts as an old
// segment nobody references, so ReleaseUnreferenced deletes it. An empty segment file is what a
// crash between creating a segment and writing its header leaves: it holds nothing and is not
// counted as damaged. Files in the directory that are not named like segments are left alone.
//
// # Durability
//
// FsyncNever only writes: records survive the process being killed, since they are in the OS
// page cache, but not a power loss. FsyncInterval adds an fsync from a background goroutine;
// FsyncAlways makes Sync wait for an fsync covering the caller's records, shared by concurrent
// callers. Unless the mode is FsyncNever, a segment is fsynced when rotated away and the
// directory is fsynced after a segment is created. Once an fsync fails, the log cannot tell what
// reached the disk, so Sync and Close report that error from then on.
package tracelog
