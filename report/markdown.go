package report

import (
	"strings"
	"unicode"

	"github.com/kovara/desktop/engine/results"
)

// Markdown is r as GitHub-flavoured Markdown, in the shape results are
// posted in forums and issues (llama-bench's -o md): the title, the
// state, the problems before any figure, the conditions in one line, a
// comparison's verdict, then each table with one row per level, stage or
// depth and the units in its headings. Cells keep the app's figures
// (with "±" where the plan measured a spread); a "|" in any text is
// escaped so it cannot split a cell.
func Markdown(r Report) string {
	var b strings.Builder
	b.WriteString("### " + inline(r.Title) + "\n\n")
	if r.Headline != "" {
		b.WriteString("**" + inline(r.Headline) + "**\n\n")
	}
	if len(r.Problems) > 0 {
		b.WriteString("Problems:\n\n")
		for _, p := range r.Problems {
			b.WriteString("- " + inline(p) + "\n")
		}
		b.WriteString("\n")
	}
	for _, c := range r.Conditions {
		b.WriteString(inline(c) + "\n\n")
	}
	if len(r.Verdict) > 0 {
		for _, v := range r.Verdict {
			b.WriteString("- " + inline(v) + "\n")
		}
		b.WriteString("\n")
	}
	for _, t := range r.Tables {
		if t.Title != "" {
			b.WriteString("#### " + inline(t.Title) + "\n\n")
		}
		writeMarkdownTable(&b, t.Table)
		b.WriteString("\n")
	}
	for _, l := range r.Legend {
		b.WriteString("_" + inline(l) + "_\n\n")
	}
	if len(r.Notes) > 0 {
		b.WriteString("Notes:\n\n")
		for _, n := range r.Notes {
			b.WriteString("- " + inline(n) + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("Measured with Kovara Desktop.\n")
	return b.String()
}

func writeMarkdownTable(b *strings.Builder, t results.Table) {
	b.WriteString("|")
	for _, c := range t.Columns {
		b.WriteString(" " + cell(Heading(c)) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Columns {
		if numericColumn(t, i) {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for i := range t.Columns {
			v := ""
			if i < len(row) {
				v = row[i]
			}
			b.WriteString(" " + cell(v) + " |")
		}
		b.WriteString("\n")
	}
}

// numericColumn: every figure of column i begins with a digit or a sign,
// so it is aligned right as numbers are.
func numericColumn(t results.Table, i int) bool {
	any := false
	for _, row := range t.Rows {
		if i >= len(row) || row[i] == results.Missing || row[i] == "" {
			continue
		}
		r := []rune(row[i])[0]
		if !unicode.IsDigit(r) && r != '-' && r != '+' && r != '−' {
			return false
		}
		any = true
	}
	return any
}

// cell is text for one table cell: one line, "|" escaped.
func cell(s string) string {
	return strings.ReplaceAll(inline(s), "|", `\|`)
}

// inline is text on one line of Markdown, with Markdown's own marks and
// HTML's angle brackets escaped: a model's name, a label or a server's
// message is shown as written, never as a link, an emphasis or a tag
// where the report is pasted.
func inline(s string) string {
	return mdEscaper.Replace(strings.Join(strings.Fields(s), " "))
}

// mdEscaper escapes the marks that make emphasis, code, tags and
// strikethrough; a link is broken between its text and its address
// ("](" becomes "]\("), so "[1]" and "[private]" read as they are. An
// underscore is left: inside a word (decode_single, Q4_K_M) it makes no
// emphasis in CommonMark, and escaping it would put a backslash into
// every such name for a reader of the plain text.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "](", `]\(`, "<", `\<`, ">", `\>`, "~", `\~`)
