// Package shellwords splits a command line a person wrote into its words,
// and joins words back into one line a POSIX shell reads as the same
// words (what ssh hands the remote shell).
package shellwords

import (
	"errors"
	"fmt"
	"strings"
)

// Split reads line as a POSIX shell reads a simple command's words:
// blanks separate them, single quotes keep everything, double quotes keep
// all but \" \\ \$ \`, a backslash keeps the next character. What would
// make it more than one command or change where its output goes (| & ; <
// > ( ) $ ` and a newline outside quotes) is refused, so the words run are
// exactly the ones shown.
func Split(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("a single quote (') is not closed")
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(line) && line[j] != '"'; j++ {
				if line[j] == '\\' && j+1 < len(line) && strings.IndexByte("\"\\$`", line[j+1]) >= 0 {
					j++
				} else if line[j] == '$' || line[j] == '`' {
					return nil, fmt.Errorf("the command has %q inside double quotes, which a shell would expand: write the value itself", string(line[j]))
				}
				w.WriteByte(line[j])
			}
			if j == len(line) {
				return nil, errors.New(`a double quote (") is not closed`)
			}
			i = j
			inWord = true
		case c == '\\':
			if i+1 == len(line) {
				return nil, errors.New("the command ends in a backslash")
			}
			i++
			w.WriteByte(line[i])
			inWord = true
		case strings.IndexByte("|&;<>()$`\n", c) >= 0:
			return nil, fmt.Errorf("the command has %q, which a shell would read as more than one command, a redirection or an expansion: write the server's own command line (put anything more in a script and run the script)", string(c))
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	if len(words) == 0 {
		return nil, errors.New("the command is empty")
	}
	return words, nil
}

// Join quotes each word that a shell would interpret and joins them with
// spaces: a line a POSIX shell reads back as exactly these words.
func Join(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = Quote(w)
	}
	return strings.Join(out, " ")
}

// Quote is w as one shell word: as it is when nothing in it is special,
// else in single quotes.
func Quote(w string) string {
	plain := w != ""
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,=:/+@%", r)) {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// Command splits a command line as a person writes it for a shell — the
// NAME=VALUE words before the program its environment — into that
// environment and the command itself, joined back ("OLLAMA_NUM_PARALLEL=4
// ollama serve": ["OLLAMA_NUM_PARALLEL=4"], "ollama serve").
func Command(line string) (env []string, command string, err error) {
	words, err := Split(line)
	if err != nil {
		return nil, "", err
	}
	for len(words) > 1 && isAssignment(words[0]) {
		env, words = append(env, words[0]), words[1:]
	}
	return env, Join(words), nil
}

// isAssignment is a NAME=VALUE word.
func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	if !ok || k == "" {
		return false
	}
	for i, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}
