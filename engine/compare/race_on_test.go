//go:build race

package compare

// raceEnabled: the race detector slows the resampling tenfold, so the
// tests that judge hundreds of seeded pairs check fewer under it (the
// rates they assert are held without it, on every seed).
const raceEnabled = true
