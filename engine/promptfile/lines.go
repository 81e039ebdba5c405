package promptfile

import (
	"bufio"
	"bytes"
	"fmt"
	"runtime"
	"sync"
)

// A JSONL file is read by one goroutine and its records decoded by one
// worker a core, in batches, then taken in file order: decoding is most
// of a scan's time, and a person's 2 GB file should not take a minute.
// At most pipeline batches are in flight, so memory stays bounded.
const (
	batchBytes   = 1 << 20
	batchRecords = 8192
)

// batch is a run of consecutive non-blank lines.
type batch struct {
	data []byte     // the records, back to back
	recs []batchRec // in file order
	done chan struct{}
	err  error // reading stopped here: the file could not be read
}

type batchRec struct {
	off      int64 // in the file
	line     int
	from, to int // in data
	tooLong  bool
	why      string // set by a worker: why the record is refused
}

// lines reads a JSONL file from start.
func (s *scan) lines(start int64) error {
	workers := max(1, runtime.GOMAXPROCS(0))
	pipeline := 2 * workers
	order := make(chan *batch, pipeline) // to the collector, in file order
	work := make(chan *batch, pipeline)  // to the workers
	free := make(chan *batch, pipeline+workers)
	stop := make(chan struct{})

	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range work {
				for i := range b.recs {
					r := &b.recs[i]
					if !r.tooLong {
						_, r.why = parseRecord(b.data[r.from:r.to], false)
					}
				}
				close(b.done)
			}
		})
	}
	var lines int // the reader's count, read once order is closed
	go func() {
		defer close(work)
		defer close(order)
		lines = s.read(start, order, work, free, stop)
	}()

	err := s.collect(order, free)
	close(stop)
	for range order {
		// Let the reader see stop and finish before the file is closed.
	}
	wg.Wait()
	s.ix.Lines = lines
	return err
}

// read reads lines into batches and hands each to the collector and the
// workers, until the end of the file or stop. It returns the number of
// physical lines read.
func (s *scan) read(start int64, order, work, free chan *batch, stop chan struct{}) int {
	br := bufio.NewReaderSize(&fileReader{f: s.f, pos: start, h: s.h, end: -1}, chunk)
	var long []byte // a line longer than the reader's buffer, up to the limit
	off := start
	b := newBatch(free)
	send := func() bool {
		select {
		case order <- b:
		case <-stop:
			return false
		}
		select {
		case work <- b:
		case <-stop:
			return false
		}
		b = newBatch(free)
		return true
	}
	for line := 1; ; line++ {
		rec, n, tooLong, err := readLine(br, &long, s.limit)
		if err != nil {
			b.err = fmt.Errorf("read the prompts file: %w", err)
		}
		if n == 0 || err != nil {
			if len(b.recs) > 0 || b.err != nil {
				send()
			}
			return line - 1
		}
		recOff := off
		off += int64(n)
		if !tooLong && len(bytes.TrimSpace(rec)) == 0 {
			continue
		}
		from := len(b.data)
		if !tooLong {
			b.data = append(b.data, rec...)
		}
		b.recs = append(b.recs, batchRec{off: recOff, line: line, from: from, to: len(b.data), tooLong: tooLong})
		if len(b.data) >= batchBytes || len(b.recs) >= batchRecords {
			if !send() {
				return line
			}
		}
	}
}

func newBatch(free chan *batch) *batch {
	select {
	case b := <-free:
		b.data, b.recs, b.err = b.data[:0], b.recs[:0], nil
		b.done = make(chan struct{})
		return b
	default:
		return &batch{done: make(chan struct{})}
	}
}

// collect takes the batches in file order, as the workers finish them.
func (s *scan) collect(order, free chan *batch) error {
	for b := range order {
		<-b.done
		if b.err != nil {
			return b.err
		}
		for _, r := range b.recs {
			var err error
			switch {
			case r.tooLong:
				err = s.bad(r.line, false, "longer than "+sizeWords(s.limit))
			case r.why != "":
				err = s.bad(r.line, false, r.why)
			default:
				err = s.good(r.off, r.to-r.from, r.line)
			}
			if err != nil {
				return err
			}
		}
		if cap(b.data) <= 2*batchBytes { // not one kept for a long record
			select {
			case free <- b:
			default:
			}
		}
	}
	return nil
}
