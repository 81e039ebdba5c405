package engine

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// Prompts and texts of the plans beyond the Kovara method. They are this
// project's own; changing any of them changes what the plans measure, so
// they are versioned with the plan (StagesPlanVersion, SpecDecPromptSet).

// DecodePrompt is one fixed single-user decode prompt of the three-stage
// plan.
type DecodePrompt struct {
	Kind string // "code", "json" or "prose"
	Text string
}

// DecodePrompts are the single-user decode prompts, in the order they run.
// Each asks for a long answer, so a model that follows it writes past the
// 1,024-token cap; a shorter answer is flagged, not hidden.
var DecodePrompts = []DecodePrompt{
	{Kind: "code", Text: "Write a complete, production-quality Go package called lrucache. " +
		"It must provide a generic type Cache[K comparable, V any] that is safe for concurrent use and offers " +
		"New(capacity int, ttl time.Duration), Get(key), Set(key, value), Delete(key), Len() and Purge(); " +
		"entries expire after the time-to-live, the least recently used entry is evicted when the cache is full, " +
		"and an optional eviction callback is called outside the lock. Keep hit, miss and eviction counters " +
		"behind a Stats() method. Document every exported identifier. After the package, write a separate " +
		"lrucache_test.go with table-driven tests for eviction order, expiry (use an injectable clock so no test " +
		"sleeps), the callback, the counters and a race test with many goroutines, plus two benchmarks. " +
		"Give only the two files, each in its own fenced code block, and no other text."},
	{Kind: "json", Text: "Create a JSON catalogue of 28 invented research vessels. Answer with one JSON object " +
		"whose only key is \"vessels\", an array of 28 objects. Every object has exactly these keys: " +
		"\"code\" (like \"RV-014\"), \"name\", \"home_port\", \"flag_country\", \"length_m\" (a number), " +
		"\"crew\" (an integer), \"launched\" (a year), \"propulsion\" (one of \"diesel\", \"diesel-electric\" or " +
		"\"hybrid\"), \"labs\" (an array of objects with \"name\" and \"area_m2\"), \"instruments\" (an array of " +
		"three to five strings), \"status\" (one of \"at sea\", \"in port\" or \"refit\") and \"summary\" " +
		"(one sentence). Vary the values realistically. Output valid JSON only, indented with two spaces, " +
		"with nothing before or after it."},
	{Kind: "prose", Text: "Write a long, flowing essay of roughly 1,600 words for curious general readers " +
		"about how people have kept time, from shadow sticks and water clocks through mechanical escapements, " +
		"pendulums and the marine chronometer, to railway time zones, quartz crystals and atomic clocks. " +
		"Explain why each step mattered to ordinary life, to navigation and to science, and include a few " +
		"concrete names, places and dates. Use plain paragraphs only: no headings, no lists, no bullet points. " +
		"Keep a warm, unhurried tone and close with a short reflective paragraph about what precise time " +
		"has given and taken away."},
}

// usersPrompt is the many-user stage's prompt: the same for every user,
// so all answers run to about the same length.
func usersPrompt() string { return DecodePrompts[2].Text }

// warmupPrompt is the compat probe's and warmups' prompt.
func warmupPrompt() string { return DecodePrompts[0].Text }

// logSentences build the cold-prefill text: an invented logbook of a
// mountain weather station. {a} and {b} are filled with numbers.
var logSentences = []string{
	"At first light the anemometer on the north mast read {a} kilometres per hour with gusts to {b}.",
	"The observer cleared rime from the radiation shield and noted a dry-bulb temperature of minus {a} degrees.",
	"Snow depth at stake {a} was measured at {b} centimetres, a little more than the day before.",
	"A thin band of altostratus moved in from the west and covered about {a} tenths of the sky by noon.",
	"The barometer fell {a} hectopascals in six hours, so the evening report carried a storm advisory.",
	"Battery bank {a} was swapped after its voltage dropped below the threshold during the cold night.",
	"Visibility toward the valley improved to {a} kilometres once the fog lifted around midday.",
	"The rain gauge heater on platform {a} failed its check and was replaced from the spare crate.",
	"Two hikers reached the station at {a} o'clock and were given tea before they started down again.",
	"The sunshine recorder logged {a} minutes of bright sun, mostly in the late afternoon.",
	"A lenticular cloud stood over the ridge for nearly {a} minutes without changing its shape.",
	"The radio link to the valley office dropped for {a} minutes and came back without data loss.",
	"Humidity at the upper sensor stayed near {a} percent while the lower sensor read {b} percent.",
	"The snow pillow recorded a water equivalent of {a} millimetres after the overnight fall.",
	"Solar panel {a} was brushed clean and its output rose by about {b} watts within the hour.",
	"A flock of alpine choughs circled the mast {a} times before settling on the weather hut roof.",
	"The observer replaced the paper chart on the thermograph and marked the time as {a} minutes past.",
	"Lightning was counted {a} times in the distant southern cells, none closer than {b} kilometres.",
	"The de-icing cycle on the wind vane ran for {a} minutes and the reading settled immediately after.",
	"Ground temperature at {a} centimetres depth held steady through the whole day.",
	"The supply cable car arrived with {a} crates of food and {b} litres of fuel for the generator.",
	"Hoar frost grew to {a} millimetres on the railings before the wind picked up and stripped it away.",
	"The ceilometer found a cloud base at {a} metres that rose slowly to {b} metres by dusk.",
	"A routine calibration of pressure sensor {a} showed an offset of {b} hundredths of a hectopascal.",
	"Avalanche debris was seen on slope {a}, reaching about {b} metres below the starting zone.",
	"The night observer heard the generator cough twice and logged a fuel filter check for the morning.",
	"Wind direction swung from the south-west to the north over {a} minutes as the front passed.",
	"The moon rose behind the eastern peak and the snow field reflected enough light to read by.",
}

// splitmix64 is the cold-prefill text's number sequence: fixed constants,
// so every machine builds the same text.
type splitmix64 uint64

func (s *splitmix64) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// prefillSeed fixes the cold-prefill text.
const prefillSeed = 0x4b6f76617261 // "Kovara"

// prefillQuestion ends the cold-prefill prompt; one output token answers it.
const prefillQuestion = "\n\nQuestion: in one word, what kind of place wrote this logbook?"

// PrefillText builds the cold-prefill prompt of about chars characters: a
// reference line that differs on every call (ref), so no prefix cache can
// answer for the server, then the same deterministic logbook text on every
// machine (a longer text only extends a shorter one), then a one-word
// question.
func PrefillText(ref string, chars int) string {
	var b strings.Builder
	b.Grow(chars + 256)
	b.WriteString("Reference ")
	b.WriteString(ref)
	b.WriteString(". The entries below come from the logbook of a high mountain weather station; read them all.")
	rng := splitmix64(prefillSeed)
	for n := 0; b.Len() < chars; n++ {
		if n%7 == 0 {
			b.WriteString("\n\nEntry ")
			b.WriteString(strconv.Itoa(n/7 + 1))
			b.WriteString(".")
		}
		s := logSentences[rng.next()%uint64(len(logSentences))]
		a := strconv.FormatUint(2+rng.next()%97, 10)
		c := strconv.FormatUint(100+rng.next()%900, 10)
		s = strings.ReplaceAll(s, "{a}", a)
		s = strings.ReplaceAll(s, "{b}", c)
		b.WriteByte(' ')
		b.WriteString(s)
	}
	b.WriteString(prefillQuestion)
	return b.String()
}

// newRef is a fresh reference for a prompt that must miss every cache.
func newRef() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// SpecDecPrompt is one representative prompt of the speculative-decoding
// mode.
type SpecDecPrompt struct {
	Kind string
	Text string
}

// SpecDecPromptSet names the set below; it is recorded with every result.
const SpecDecPromptSet = "kovara-specdec-v1"

// SpecDecPrompts are the speculative-decoding mode's prompts: ordinary
// tasks of different kinds, because a drafter's acceptance depends on the
// text. Each answer stops when the model is done.
var SpecDecPrompts = []SpecDecPrompt{
	{"code", "Write a Python function that merges overlapping time intervals given as a list of (start, end) " +
		"tuples and returns them sorted. Include a docstring, type hints and three example calls with their output."},
	{"chat", "I just adopted a shy three-year-old cat who hides under the bed all day. What can I do during the " +
		"first two weeks to help her settle in? Please be practical and friendly."},
	{"translation", "Translate into French, keeping the tone polite and natural: \"Thank you for your message. " +
		"The workshop has been moved to Thursday at ten in the morning, in the small meeting room on the second " +
		"floor. Please bring your laptop and the notes from last week. If you cannot attend, let me know by " +
		"Wednesday evening so I can send you the recording.\""},
	{"math", "A train leaves a station at 08:40 travelling at 84 km/h. A second train leaves the same station on " +
		"the same track at 09:15 travelling at 112 km/h. At what time does the second train catch the first, and " +
		"how far from the station? Work through it step by step and check the answer."},
	{"summarisation", "Summarise the following in three sentences for a busy manager: The team migrated the " +
		"billing service from a single virtual machine to a managed container platform over six weeks. Response " +
		"times at the 95th percentile fell from 480 to 210 milliseconds, and deployments now take eight minutes " +
		"instead of an hour. Costs rose by about twelve percent because of the new load balancer and log " +
		"retention, which the team believes can be trimmed. Two incidents happened during the move, both caused " +
		"by a misconfigured health check, and neither affected customers for more than five minutes. The old " +
		"machine will be switched off at the end of the month once the final data export is verified."},
	{"extraction", "Extract every person, organisation, date and amount of money from this text and answer " +
		"with a JSON object with those four keys, each an array of strings: \"On 3 March 2025 Maria Okafor of " +
		"Northwind Logistics signed a contract with Harbourline Ltd worth 2.4 million euros. The deal was " +
		"reviewed by Tomas Lind, who joined Harbourline in January, and payment of the first 600,000 euros is " +
		"due on 30 June.\""},
	{"explanation", "Explain to a new developer what happens, step by step, between typing a web address into a " +
		"browser and seeing the page: name resolution, the connection, TLS, the request, the response and " +
		"rendering. Keep each step short and concrete."},
	{"sql", "Given tables customers(id, name, country), orders(id, customer_id, placed_at, total) and " +
		"order_items(order_id, product_id, quantity, unit_price), write a SQL query that lists, for each country, " +
		"the three customers with the highest total spend in 2024, with their spend and rank. Explain briefly how " +
		"the query works."},
	{"rewrite", "Rewrite this note as a clear, friendly email to a client, keeping all the facts: \"cant make " +
		"fri mtg, car broke, can do mon or tue pm, sorry. also the draft is 90% done, missing the budget table, " +
		"will send by wed.\""},
	{"story", "Write a short story of about 300 words about a night-shift baker who finds a letter tucked inside " +
		"an old recipe book, apparently written by her own grandmother. End on a quiet, hopeful note."},
}
