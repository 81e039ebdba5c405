package results

import (
	"fmt"
	"strconv"
	"strings"
)

// ConnectionNote says in one sentence what the slots did about
// connections the server closed during the run, or "" when it closed none.
// Such closes are never failed requests: the slot reconnects between
// requests, outside the measured time, and a request that met a closed
// connection before any answer is sent again once (docs/servers.md). A
// level whose requests connected as they were sent (Connections.Connected)
// is said apart, in a sentence of its own.
func ConnectionNote(f *File) string {
	var sum Connections
	every := true
	var connectedAt []string // the levels whose requests connected as sent
	for _, l := range f.Local.Levels {
		c := l.Connections
		if c == nil {
			every = false
			continue
		}
		sum.Reconnects += c.Reconnects
		sum.Resent += c.Resent
		sum.ServerClosed += c.ServerClosed
		sum.Requests += c.Requests
		if c.Connected > 0 {
			// Its requests opened their own connections: no slot
			// reconnected there, whatever the server did after answers.
			sum.Connected += c.Connected
			connectedAt = append(connectedAt, strconv.Itoa(l.Concurrency))
			continue
		}
		// Each slot's last answer ends the level before it reconnects.
		if c.Reconnects < c.Requests-l.Concurrency {
			every = false
		}
	}
	var out []string
	if sum.Reconnects > 0 || sum.Resent > 0 {
		resent := ""
		if sum.Resent > 0 {
			resent = fmt.Sprintf("; %d %s met a connection closed as it was sent and went again on a fresh one, counted once",
				sum.Resent, Plural(sum.Resent, "request", "requests"))
		}
		if every {
			out = append(out, fmt.Sprintf("The server closed the connection after every answer; each slot reconnected between requests, outside the measured time (%d reconnects%s).",
				sum.Reconnects, resent))
		} else {
			out = append(out, fmt.Sprintf("The server closed %d %s during the run; the slots reconnected between requests, outside the measured time (%d reconnects%s).",
				max(sum.ServerClosed, 1), Plural(sum.ServerClosed, "connection", "connections"), sum.Reconnects, resent))
		}
	}
	if sum.Connected > 0 {
		out = append(out, fmt.Sprintf("At concurrency %s the server could not keep a connection open ahead for every user: it closed some of those opened before the level while others waited to be taken (llama-server answers HTTP from -np + 2 threads, and an idle connection holds one). So each request opened its own connection as it was sent, inside its time to first token, as a client without kept-alive connections does (%d %s).",
			JoinAnd(connectedAt), sum.Connected, Plural(sum.Connected, "request", "requests")))
	}
	return strings.Join(out, " ")
}

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CacheWarnShare is the share of a level's prompt tokens served from the
// server's prompt cache, beyond what every request shares by design
// (PromptCache.SharedTokens: the chat template and the instruction), above
// which its TTFT is no longer a cold prefill. Under it sit the few leading
// digits of the request numbers that neighbouring prompts share, and the
// instruction itself in files that did not measure it.
const CacheWarnShare = 0.05

// PromptCacheHit finds the level whose prompts came most from the server's
// prompt cache beyond what the method shares by design, when more than
// CacheWarnShare did: its concurrency and that share. ok is false when no
// level crossed the line.
func PromptCacheHit(f *File) (concurrency int, share float64, ok bool) {
	if l, s := promptCacheLevel(f); l != nil {
		return l.Concurrency, s, true
	}
	return 0, 0, false
}

// promptCacheLevel is the level PromptCacheHit finds and its share beyond
// the shared start, or nil.
func promptCacheLevel(f *File) (*LevelLocal, float64) {
	if f.Local.Workload != nil {
		// Its requests share a system prompt or a history by design: the
		// cache hit is the point, said in its notes (workloadNotes).
		return nil, 0
	}
	var worst *LevelLocal
	share := 0.0
	for i, l := range f.Local.Levels {
		if s := l.PromptCache.Beyond(); s > CacheWarnShare && s > share {
			worst, share = &f.Local.Levels[i], s
		}
	}
	return worst, share
}

// What stamped a run's chunks (local.receive_clock).
const (
	ReceiveClockKernel = "kernel" // the kernel's receive time of each read (Linux SO_TIMESTAMPNS)
	ReceiveClockRead   = "read"   // the moment each read returned: where the system gives no receive timestamps
	ReceiveClockMixed  = "mixed"  // some of each
)

// ReceiveClockOf names the receive clock from how many reads each stamped.
func ReceiveClockOf(kernel, read int) string {
	switch {
	case kernel > 0 && read == 0:
		return ReceiveClockKernel
	case read > 0 && kernel == 0:
		return ReceiveClockRead
	case kernel > 0:
		return ReceiveClockMixed
	}
	return ""
}
