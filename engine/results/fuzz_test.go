package results

import (
	"testing"
)

// FuzzDecode feeds arbitrary bytes to Decode and PublishCheck. Neither may
// panic; whatever Decode accepts must marshal back into a valid file; and
// PublishCheck gives either a payload or reasons, never both or neither.
// More seeds are in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add(readFixture(f, "hardware.json"))
	f.Add(readFixture(f, "python_cli.json"))
	f.Fuzz(func(t *testing.T, data []byte) {
		payload, reasons := PublishCheck(data)
		if (payload == nil) == (reasons == nil) {
			t.Fatalf("PublishCheck gave payload %q and reasons %q", payload, reasons)
		}
		file, err := Decode(data)
		if err != nil {
			if file != nil {
				t.Fatal("Decode returned a file with an error")
			}
			return
		}
		// Marshal validates what it writes: a file Decode accepted must
		// always be writable again.
		if _, err := Marshal(file); err != nil {
			t.Fatalf("Decode accepted a file that Marshal cannot write back: %v", err)
		}
	})
}
