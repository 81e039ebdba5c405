package prompt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.json from the current generator")

// The simulator locates the request number with exactly this pattern.
var requestRE = regexp.MustCompile(`Request (\d+):`)

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestWordListFile(t *testing.T) {
	raw, err := os.ReadFile("words.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256Hex(raw); got != WordListSHA256 {
		t.Fatalf("words.txt SHA-256 = %s, WordListSHA256 = %s", got, WordListSHA256)
	}
	if string(raw) != wordsFile {
		t.Fatal("embedded word list differs from words.txt on disk")
	}
	if bytes.Contains(raw, []byte("\r")) {
		t.Fatal("words.txt must use LF line endings")
	}
	if !bytes.HasSuffix(raw, []byte("\n")) || bytes.HasSuffix(raw, []byte("\n\n")) {
		t.Fatal("words.txt must end with exactly one LF")
	}

	w := Words()
	if len(w) != 1024 {
		t.Fatalf("len(Words()) = %d, want 1024", len(w))
	}
	valid := regexp.MustCompile(`^[a-z]{2,10}$`)
	seen := map[string]bool{}
	for _, x := range w {
		if !valid.MatchString(x) {
			t.Errorf("word %q is not 2-10 lowercase ASCII letters", x)
		}
		if seen[x] {
			t.Errorf("word %q appears twice", x)
		}
		seen[x] = true
	}
	if !slices.IsSorted(w) {
		t.Error("words.txt is not in byte order (docs/method.md says it is)")
	}
}

func TestWordsReturnsCopy(t *testing.T) {
	a := Words()
	a[0] = "changed"
	if Words()[0] == "changed" {
		t.Fatal("Words() exposes the internal list")
	}
}

func TestInstruction(t *testing.T) {
	if strings.Contains(Instruction, "Request") || requestRE.MatchString(Instruction) {
		t.Fatal("the instruction must not contain the request marker")
	}
	for i := 0; i < len(Instruction); i++ {
		if c := Instruction[i]; c < 0x20 || c > 0x7e {
			t.Fatalf("instruction byte %d (%#x) is not printable ASCII", i, c)
		}
	}
}

// The reference outputs of SplitMix64 started from state 0, as published
// with the algorithm; they pin the mixing constants independently of our
// own golden file.
func TestSplitMix64Reference(t *testing.T) {
	s := splitmix64{}
	want := []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f}
	for i, w := range want {
		if got := s.next(); got != w {
			t.Fatalf("output %d = %#016x, want %#016x", i, got, w)
		}
	}
}

// Worked example from docs/method.md. If this changes, the generator has
// changed and needs a new Generator identifier.
const (
	exampleText = "Write a long story that uses the following words. Request 5: " +
		"squirrel rough behind watch sad some coast neighbor"
	exampleState0 = 0x63f5f2a571ce4ab5
)

var exampleOutputs = []uint64{0xce3cd34600e11e06, 0xb3347fa19a9fc3c7, 0x1000182ae175d2e5}

func TestWorkedExample(t *testing.T) {
	if got := Text(7, 5, 8); got != exampleText {
		t.Fatalf("Text(7, 5, 8) = %q, want %q", got, exampleText)
	}
	s := newStream(7, 5)
	if s.state != exampleState0 {
		t.Fatalf("state0 = %#016x, want %#016x", s.state, uint64(exampleState0))
	}
	for i, w := range exampleOutputs {
		if got := s.next(); got != w {
			t.Fatalf("output %d = %#016x, want %#016x", i, got, w)
		}
	}
}

// docs/method.md must show the same worked example the code produces.
func TestDocsShowWorkedExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "method.md"))
	if err != nil {
		t.Skipf("docs/method.md not readable: %v", err)
	}
	for _, want := range []string{
		exampleText,
		fmt.Sprintf("0x%016x", uint64(exampleState0)),
		fmt.Sprintf("0x%016x", exampleOutputs[0]),
		fmt.Sprintf("0x%016x", exampleOutputs[1]),
		fmt.Sprintf("0x%016x", exampleOutputs[2]),
		WordListSHA256,
		Instruction,
		Generator,
	} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("docs/method.md does not mention %q", want)
		}
	}
}

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		seed  int64
		n     int64
		words int
	}{
		{7, 0, 0}, {7, 1, 1}, {0, 5, 10}, {-1, 1000000, 300}, {123456789, 1<<63 - 1, 50},
	} {
		got := Text(tc.seed, tc.n, tc.words)
		prefix := Instruction + " Request " + strconv.FormatInt(tc.n, 10) + ":"
		if !strings.HasPrefix(got, prefix) {
			t.Fatalf("%+v: text %q does not start with %q", tc, got, prefix)
		}
		rest := got[len(prefix):]
		if tc.words == 0 {
			if rest != "" {
				t.Fatalf("%+v: zero words must end at the colon, got tail %q", tc, rest)
			}
		} else {
			if !strings.HasPrefix(rest, " ") {
				t.Fatalf("%+v: missing space after the colon", tc)
			}
			fields := strings.Split(rest[1:], " ")
			if len(fields) != tc.words {
				t.Fatalf("%+v: %d words, want %d", tc, len(fields), tc.words)
			}
			for _, f := range fields {
				if !slices.Contains(list[:], f) {
					t.Fatalf("%+v: %q is not a list word", tc, f)
				}
			}
		}
		m := requestRE.FindAllStringSubmatch(got, -1)
		if len(m) != 1 || m[0][1] != strconv.FormatInt(tc.n, 10) {
			t.Fatalf("%+v: request marker matches %v", tc, m)
		}
	}
}

func TestAppendTextMatchesText(t *testing.T) {
	for _, seed := range []int64{7, 0, -1, 123456789, -1 << 63} {
		for _, n := range []int64{0, 1, 5, 1000000} {
			for _, k := range []int{0, 1, 10, 1024} {
				want := Text(seed, n, k)
				if got := string(AppendText(nil, seed, n, k)); got != want {
					t.Fatalf("AppendText(nil, %d, %d, %d) != Text", seed, n, k)
				}
				pre := []byte("prefix|")
				got := AppendText(pre, seed, n, k)
				if string(got) != "prefix|"+want {
					t.Fatalf("AppendText onto a non-empty slice (%d, %d, %d) is wrong", seed, n, k)
				}
			}
		}
	}
}

// Growing the word count only appends words, which calibration relies on.
func TestLongerIsExtension(t *testing.T) {
	full := Text(7, 3, 1024)
	for _, k := range []int{0, 1, 2, 100, 1023} {
		if p := Text(7, 3, k); !strings.HasPrefix(full, p) {
			t.Fatalf("Text(7, 3, %d) is not a prefix of Text(7, 3, 1024)", k)
		}
	}
}

func wordsOf(text string) []string {
	_, rest, _ := strings.Cut(text, ": ")
	return strings.Fields(rest)
}

func TestDifferentRequestsDiffer(t *testing.T) {
	const k = 32
	seen := map[string]int64{}
	samePos := 0
	var prev []string
	for n := int64(0); n < 2000; n++ {
		ws := wordsOf(Text(7, n, k))
		key := strings.Join(ws, " ")
		if m, ok := seen[key]; ok {
			t.Fatalf("requests %d and %d got the same words", m, n)
		}
		seen[key] = n
		if prev != nil && slices.Equal(ws[:4], prev[:4]) {
			t.Fatalf("requests %d and %d start with the same four words", n-1, n)
		}
		for i := range ws {
			if prev != nil && ws[i] == prev[i] {
				samePos++
			}
		}
		prev = ws
	}
	// Neighbouring requests should agree at a position about 1/1024 of the
	// time; 1999 pairs * 32 positions gives about 62 expected matches.
	if samePos > 150 {
		t.Fatalf("neighbouring requests agree at %d word positions; streams look correlated", samePos)
	}
	if slices.Equal(wordsOf(Text(7, 5, k)), wordsOf(Text(8, 5, k))) {
		t.Fatal("seeds 7 and 8 give the same words for request 5")
	}
}

// Every list word should be reachable, and none should dominate.
func TestWordDistribution(t *testing.T) {
	counts := make(map[string]int, 1024)
	const draws = 1024 * 200
	for _, w := range wordsOf(Text(7, 42, draws)) {
		counts[w]++
	}
	if len(counts) != 1024 {
		t.Fatalf("only %d of 1024 words were drawn in %d draws", len(counts), draws)
	}
	for w, c := range counts {
		// Expected 200 per word, standard deviation about 14.
		if c < 120 || c > 280 {
			t.Errorf("word %q drawn %d times, expected about 200", w, c)
		}
	}
}

func TestRequestNumbers(t *testing.T) {
	if ProbeRequest != 0 || CalibrationRequest(0) != 1 || CalibrationRequest(3) != 4 {
		t.Fatal("probe and calibration numbers are wrong")
	}
	if WarmupRequest(0) != 5 || WarmupRequest(3) != 8 {
		t.Fatal("warmup numbers are wrong")
	}
	// Default plan: 4 warmup, 100 requests per level, levels 1, 8, 32.
	if got := MeasuredRequest(4, 100, 0, 0); got != 9 {
		t.Fatalf("first measured request = %d, want 9", got)
	}
	if got := MeasuredRequest(4, 100, 1, 0); got != 109 {
		t.Fatalf("first request of level 2 = %d, want 109", got)
	}
	if got := MeasuredRequest(4, 100, 2, 99); got != 308 {
		t.Fatalf("last request of level 3 = %d, want 308", got)
	}
	if got := MeasuredRequest(0, 10, 0, 0); got != 5 {
		t.Fatalf("without warmup the first measured request = %d, want 5", got)
	}
	for _, f := range []func(){
		func() { CalibrationRequest(4) },
		func() { CalibrationRequest(-1) },
		func() { WarmupRequest(-1) },
		func() { MeasuredRequest(4, 100, 0, 100) },
		func() { MeasuredRequest(-1, 100, 0, 0) },
	} {
		if !panics(f) {
			t.Error("an invalid request-number argument did not panic")
		}
	}
}

func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
}

func TestInvalidArgumentsPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"Text negative n":           func() { Text(7, -1, 1) },
		"Text negative words":       func() { Text(7, 1, -1) },
		"AppendText negative n":     func() { AppendText(nil, 7, -5, 1) },
		"AppendText negative words": func() { AppendText(nil, 7, 5, -1) },
	} {
		if !panics(f) {
			t.Errorf("%s: no panic", name)
		}
	}
}

func TestAllocations(t *testing.T) {
	buf := make([]byte, 0, 64<<10)
	if a := testing.AllocsPerRun(100, func() { buf = AppendText(buf[:0], 7, 12345, 1024) }); a != 0 {
		t.Errorf("AppendText into a large enough buffer: %v allocations, want 0", a)
	}
	if a := testing.AllocsPerRun(100, func() { _ = AppendText(nil, 7, 12345, 1024) }); a > 1 {
		t.Errorf("AppendText(nil, ...): %v allocations, want at most 1", a)
	}
	if a := testing.AllocsPerRun(100, func() { _ = Text(7, 12345, 1024) }); a > 1 {
		t.Errorf("Text: %v allocations, want at most 1", a)
	}
}

type goldenCase struct {
	Seed       int64    `json:"seed"`
	N          int64    `json:"n"`
	Words      int      `json:"words"`
	Bytes      int      `json:"bytes"`
	SHA256     string   `json:"sha256"`
	FirstWords []string `json:"first_words"`
	Text       string   `json:"text,omitempty"` // only for short prompts
}

type goldenFile struct {
	Generator      string       `json:"generator"`
	Instruction    string       `json:"instruction"`
	WordListSHA256 string       `json:"word_list_sha256"`
	Cases          []goldenCase `json:"cases"`
}

var goldenInputs = []struct {
	seed  int64
	n     int64
	words int
}{
	{7, 0, 0},
	{7, 1, 1},
	{7, 5, 10},
	{7, 1000000, 1024},
	{0, 0, 10},
	{0, 5, 1024},
	{-1, 1, 10},
	{-1, 1000000, 1},
	{123456789, 5, 1024},
	{123456789, 0, 10},
}

func makeGolden() goldenFile {
	g := goldenFile{Generator: Generator, Instruction: Instruction, WordListSHA256: WordListSHA256}
	for _, in := range goldenInputs {
		text := Text(in.seed, in.n, in.words)
		ws := wordsOf(text)
		first := ws[:min(12, len(ws))]
		if first == nil {
			first = []string{}
		}
		c := goldenCase{
			Seed: in.seed, N: in.n, Words: in.words,
			Bytes: len(text), SHA256: sha256Hex([]byte(text)), FirstWords: first,
		}
		if in.words <= 12 {
			c.Text = text
		}
		g.Cases = append(g.Cases, c)
	}
	return g
}

func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "golden.json")
	got := makeGolden()
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	var want goldenFile
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if want.Generator != Generator || want.Instruction != Instruction || want.WordListSHA256 != WordListSHA256 {
		t.Fatalf("golden header (%q, %q, %s) does not match the package", want.Generator, want.Instruction, want.WordListSHA256)
	}
	if len(want.Cases) != len(got.Cases) {
		t.Fatalf("golden file has %d cases, generator produced %d", len(want.Cases), len(got.Cases))
	}
	for i, w := range want.Cases {
		g := got.Cases[i]
		if w.Seed != g.Seed || w.N != g.N || w.Words != g.Words {
			t.Fatalf("case %d inputs differ: golden %+v", i, w)
		}
		label := fmt.Sprintf("seed %d, n %d, words %d", w.Seed, w.N, w.Words)
		if g.SHA256 != w.SHA256 || g.Bytes != w.Bytes {
			t.Errorf("%s: SHA-256 %s (%d bytes), golden %s (%d bytes)", label, g.SHA256, g.Bytes, w.SHA256, w.Bytes)
		}
		if !slices.Equal(g.FirstWords, w.FirstWords) {
			t.Errorf("%s: first words %v, golden %v", label, g.FirstWords, w.FirstWords)
		}
		if g.Text != w.Text {
			t.Errorf("%s: text %q, golden %q", label, g.Text, w.Text)
		}
	}
}

func BenchmarkAppendText1024(b *testing.B) {
	buf := make([]byte, 0, 16<<10)
	b.ReportAllocs()
	n := int64(0)
	for b.Loop() {
		buf = AppendText(buf[:0], 7, n, 1024)
		n++
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkText1024(b *testing.B) {
	b.ReportAllocs()
	n := int64(0)
	for b.Loop() {
		_ = Text(7, n, 1024)
		n++
	}
}
