package results

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestKovaraGoodput: a Kovara results file with a service level shows
// each level's goodput in its table and its headline, validates, and
// keeps it out of the published document, which is the same bytes as
// without it.
func TestKovaraGoodput(t *testing.T) {
	t.Parallel()
	data := readFixture(t, "hardware.json")
	plain, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	f.Local.SLO = &RateSLO{TTFTMs: 500, TPOTMs: 50}
	f.Local.Levels[0].Goodput = &Goodput{Met: 20, Share: 1, Rate: 2.5}
	f.Local.Levels[1].Goodput = &Goodput{Met: 12, Share: 0.6, Rate: 4.1}

	tab := ResultTable(f)
	if got, want := tab.Columns[len(tab.Columns)-2:], GoodputColumns; !slices.Equal(got, want) {
		t.Errorf("last columns %q, want %q", got, want)
	}
	if got, want := tab.Rows[1][len(tab.Rows[1])-2:], []string{"60", "4.10"}; !slices.Equal(got, want) {
		t.Errorf("level 8's goodput cells %q, want %q", got, want)
	}
	if n := len(ResultTable(plain).Columns); n != len(tab.Columns)-2 {
		t.Errorf("without a service level %d columns, want %d", n, len(tab.Columns)-2)
	}
	h := Headline(f, Warnings(f))
	if want := "Goodput (the requests that met the service level) against TTFT ≤ 500 ms, TPOT (time per output token after the first) ≤ 50 ms: 100 % of requests at 1 user, 60 % at 8 users (4.10 req/s)."; !strings.HasSuffix(h, want) {
		t.Errorf("headline %q, want it to end %q", h, want)
	}
	if h := Headline(plain, Warnings(plain)); strings.Contains(h, "Goodput") {
		t.Errorf("headline without a service level %q", h)
	}

	out, err := Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(out); err != nil {
		t.Fatalf("with goodput: %v", err)
	}
	if !bytes.Contains(out, []byte(`"goodput"`)) || !bytes.Contains(out, []byte(`"slo"`)) {
		t.Fatalf("the file does not keep the goodput:\n%s", out)
	}
	payload, reasons := PublishCheck(out)
	want, _ := PublishCheck(data)
	if !bytes.Equal(payload, want) || bytes.Contains(payload, []byte("goodput")) {
		t.Errorf("published document changed by goodput (reasons %q):\n%s", reasons, payload)
	}
}
