// Package stream turns the bytes of a streaming /v1/chat/completions response
// into timed events and decodes each event's JSON chunk.
//
// It exists because the benchmark's numbers are only as good as the moment a
// chunk is stamped. A general-purpose SSE client stamps an event when the
// caller gets round to it; Reader instead calls the run's monotonic clock
// right after every socket Read that returned bytes, so each event carries
// the time its bytes arrived, however long the caller took to ask for it.
//
// Two more constraints shape the code. A misbehaving server can send one
// endless line, so every line (and every event's joined data) is bounded:
// past the limit the reader stops with ErrLineTooLong instead of buffering
// without end. And a run at hundreds of concurrent streams decodes millions
// of chunks, so the hot path allocates nothing: Reader reuses its buffers,
// and Decode is a small validating JSON scanner that only looks at the
// handful of fields the method needs (text deltas, finish reason, usage,
// errors and llama.cpp timings) while still rejecting malformed input. A
// JSON library doing the same job was measured against it and cost about
// twice as much (docs/performance.md, "The chunk decoder against a JSON
// library").
package stream
