package compare

// What the live test (live_test.go, package compare_test: it imports
// engine, which imports this package) reads of the package's insides.

var (
	SpreadOf       = spreadOf
	NewLevelSample = newLevelSample
	JudgedIDs      = judgedIDs
)

func (s *levelSpread) Value(id string) float64 { return s.value[statOf[id]] }

func (lv *levelSample) Replay(order []int32) int64 { return lv.replay(order) }

func (lv *levelSample) Blocks() int { return len(lv.blocks) }
