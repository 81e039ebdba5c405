package hwtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// StandInShellyW is what StandInShelly's plug reads: the captured
// status's apower.
const StandInShellyW = 28.2

// StandInShelly is a wall plug for the rest of the test: a stand-in
// answering Shelly.GetStatus with a real Shelly Plus 1PM's status
// (hw/testdata/captured, SOURCES.md), StandInShellyW watts, and 404 to
// anything else; it returns the plug's address.
func StandInShelly(t testing.TB) string {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	status, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "testdata", "captured", "shelly_gen2_plus1pm_shelly_getstatus_telekatz1.json"))
	if err != nil {
		t.Fatal(err)
	}
	plug := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/rpc/Shelly.GetStatus" {
			http.NotFound(w, r)
			return
		}
		w.Write(status)
	}))
	t.Cleanup(plug.Close)
	return plug.URL
}
