package drift

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

func lp(p float64) float64 { return math.Log(p) }

// TestKLLowerBound: exact where both lists hold the whole distribution,
// never above the true KL where they hold part of it, 0 for the same
// lists.
func TestKLLowerBound(t *testing.T) {
	t.Parallel()
	// True distributions over four tokens.
	p := []float64{0.7, 0.2, 0.06, 0.04}
	q := []float64{0.5, 0.3, 0.1, 0.1}
	trueKL := 0.0
	for i := range p {
		trueKL += p[i] * math.Log(p[i]/q[i])
	}
	list := func(d []float64, ids ...int) Position {
		var out Position
		for _, id := range ids {
			out = append(out, Alt{ID: id, LogProb: lp(d[id])})
		}
		return out
	}
	tests := []struct {
		name  string
		p, q  Position
		exact bool
	}{
		{"whole distributions", list(p, 0, 1, 2, 3), list(q, 0, 1, 2, 3), true},
		{"top 2 of each", list(p, 0, 1), list(q, 0, 1), false},
		{"a baseline token missing from the other list", list(p, 0, 1, 2), list(q, 0, 1, 3), false},
		{"top 1", list(p, 0), list(q, 0), false},
	}
	for _, tt := range tests {
		got := KLLowerBound(tt.p, tt.q)
		if tt.exact && math.Abs(got-trueKL) > 1e-12 {
			t.Errorf("%s: %.6f, want the true %.6f", tt.name, got, trueKL)
		}
		if got > trueKL+1e-12 || got < 0 {
			t.Errorf("%s: %.6f, want within [0, %.6f]", tt.name, got, trueKL)
		}
	}
	if got := KLLowerBound(list(p, 0, 1), list(p, 0, 1)); got != 0 {
		t.Errorf("the same lists: %g, want 0", got)
	}
	// A top-1 view still sees the top token's probability move: the
	// binary KL of 0.7 against 0.5.
	want := 0.7*math.Log(0.7/0.5) + 0.3*math.Log(0.3/0.5)
	if got := KLLowerBound(list(p, 0), list(q, 0)); math.Abs(got-want) > 1e-12 {
		t.Errorf("top 1: %.6f, want %.6f", got, want)
	}
}

// capture is what llama-server b4748 said (testdata/README.md).
type capture struct {
	Prompts []struct {
		Ref  []int                 `json:"ref"`
		Base []Position            `json:"base"`
		Read map[string][]Position `json:"read"`
	} `json:"prompts"`
}

func loadCapture(t *testing.T) capture {
	t.Helper()
	data, err := os.ReadFile("testdata/llamacpp-b4748-soft.json")
	if err != nil {
		t.Fatal(err)
	}
	var c capture
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// measured is setting name read against the baseline over every prompt.
func (c capture) measured(t *testing.T, name string) Measured {
	t.Helper()
	var base, other []Position
	var ref []int
	for _, p := range c.Prompts {
		base, other, ref = append(base, p.Base...), append(other, p.Read[name]...), append(ref, p.Ref...)
	}
	m, err := Compare(base, other, ref)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRealQuantisations: on a real llama-server, the F32 model read
// again measures a floor of 0; Q8_0 and Q4_0 drift beyond it on
// KL divergence, Q4_0 far further; none changes the top token of this
// sure-of-itself model, so neither is called beyond the floor on it.
func TestRealQuantisations(t *testing.T) {
	t.Parallel()
	c := loadCapture(t)
	floor := c.measured(t, "f32_again")
	if floor.Positions != 96 || floor.SameTop != 1 || floor.KLMean != 0 || floor.RefProb < 0.8 {
		t.Fatalf("floor: %+v, want 96 positions, every top the same, KL 0", floor.Figures)
	}
	q8, q4 := c.measured(t, "q8_0"), c.measured(t, "q4_0")
	for _, tt := range []struct {
		name string
		m    Measured
	}{{"Q8_0", q8}, {"Q4_0", q4}} {
		sameTop, kl := Beyond(tt.m, floor)
		if !kl || sameTop {
			t.Errorf("%s: beyond the floor on KL %v, on the same top token %v; want KL only (%+v)", tt.name, kl, sameTop, tt.m.Figures)
		}
	}
	if q4.KLMean < 10*q8.KLMean || q4.KLP99 <= q8.KLP99 {
		t.Errorf("Q4_0 KL mean %.3g (p99 %.3g) against Q8_0 %.3g (p99 %.3g): want Q4_0 clearly further", q4.KLMean, q4.KLP99, q8.KLMean, q8.KLP99)
	}
	if q4.RefProb >= floor.RefProb {
		t.Errorf("the baseline's token under Q4_0 %.4f, under F32 %.4f: want lower", q4.RefProb, floor.RefProb)
	}
	if self := c.measured(t, "f32"); self.KLMean != 0 {
		t.Errorf("the F32 server read by teacher forcing differs from its own generation: KL %g", self.KLMean)
	}
}

// TestBeyondNeedsMoreThanAHandful: a drift shown by a few positions of
// hundreds is within the floor; the same shift at every position is not.
func TestBeyondNeedsMoreThanAHandful(t *testing.T) {
	t.Parallel()
	mk := func(n, changed int, kl float64) Measured {
		m := Measured{KL: make([]float64, n), Same: make([]bool, n)}
		m.Positions = n
		same := 0
		for i := range n {
			if i < changed {
				m.KL[i] = kl
			} else {
				m.Same[i] = true
				same++
			}
		}
		m.SameTop = float64(same) / float64(n)
		m.KLMean = mean(m.KL)
		return m
	}
	floor := mk(300, 0, 0)
	tests := []struct {
		name             string
		m                Measured
		wantSame, wantKL bool
	}{
		{"two positions of 300", mk(300, 2, 0.05), false, false},
		{"a tenth of them", mk(300, 30, 0.05), true, true},
		{"the floor itself", mk(300, 0, 0), false, false},
	}
	for _, tt := range tests {
		same, kl := Beyond(tt.m, floor)
		if same != tt.wantSame || kl != tt.wantKL {
			t.Errorf("%s: beyond on the top token %v, on KL %v; want %v, %v", tt.name, same, kl, tt.wantSame, tt.wantKL)
		}
	}
}

func TestCompareRefusesMismatchedInput(t *testing.T) {
	t.Parallel()
	one := []Position{{{ID: 1, LogProb: 0}}}
	if _, err := Compare(one, nil, []int{1}); err == nil {
		t.Error("a missing reading was compared")
	}
	if _, err := Compare(nil, nil, nil); err != ErrNoPositions {
		t.Errorf("nothing to compare: %v", err)
	}
	if _, err := Compare(one, []Position{{}}, []int{1}); err == nil {
		t.Error("an empty top list was compared as a difference")
	}
}

// TestRulerWords: a mean KL divergence in the words of the published
// marks.
func TestRulerWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kl   float64
		want string
	}{
		{0, "less than BF16 against FP16 costs Llama 3 8B (2.5e-05)"},
		{1.3e-4, "between what BF16 against FP16 (2.5e-05) and Q8_0 (0.0014) cost Llama 3 8B"},
		{0.0012, "about what Q8_0 costs Llama 3 8B (0.0014)"},
		{0.03, "about what Q4_K_M costs Llama 3 8B (0.031)"},
		{0.1, "between what Q4_K_M (0.031) and Q2_K (0.45) cost Llama 3 8B"},
		{2, "more than Q2_K costs Llama 3 8B (0.45)"},
	}
	for _, tt := range tests {
		if got := RulerWords(tt.kl); got != tt.want {
			t.Errorf("RulerWords(%g) = %q, want %q", tt.kl, got, tt.want)
		}
	}
	for i := 1; i < len(Ruler); i++ {
		if Ruler[i].KL <= Ruler[i-1].KL || Ruler[i].SameTop >= Ruler[i-1].SameTop {
			t.Errorf("the ruler is out of order at %s", Ruler[i].Name)
		}
	}
}
