package examples

import (
	"fmt"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"
)

// Between returns the text between the open marker and the close marker
// after it; each must appear exactly once.
func Between(doc, open, close string) (string, error) {
	i := strings.Index(doc, open)
	if i < 0 {
		return "", fmt.Errorf("marker %s not found", open)
	}
	if strings.Count(doc, open) > 1 {
		return "", fmt.Errorf("marker %s appears %d times, want once", open, strings.Count(doc, open))
	}
	rest := doc[i+len(open):]
	j := strings.Index(rest, close)
	if j < 0 {
		return "", fmt.Errorf("marker %s has no closing %s", open, close)
	}
	return rest[:j], nil
}

// CodeBlock is one fenced (```) code block of a Markdown document.
type CodeBlock struct {
	Lang string // the info string after the opening fence: "sh", "dockerfile", ""
	Body string // the lines between the fences
}

// FencedBlocks returns md's fenced code blocks in order, as goldmark
// (CommonMark) reads them: in lists and quotes, ``` or ~~~, indentation off.
func FencedBlocks(md string) []CodeBlock {
	src := []byte(md)
	var blocks []CodeBlock
	doc := goldmark.DefaultParser().Parse(text.NewReader(src))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		fb, ok := n.(*ast.FencedCodeBlock)
		if !ok || !entering {
			return ast.WalkContinue, nil
		}
		var body strings.Builder
		lines := fb.Lines()
		for i := 0; i < lines.Len(); i++ {
			seg := lines.At(i)
			body.WriteString(strings.Repeat(" ", seg.Padding))
			body.Write(seg.Value(src))
		}
		b := CodeBlock{Body: strings.TrimSuffix(body.String(), "\n")}
		if fb.Info != nil {
			b.Lang = strings.TrimSpace(string(fb.Info.Segment.Value(src)))
		}
		blocks = append(blocks, b)
		return ast.WalkSkipChildren, nil
	})
	return blocks
}

// CodeBlocks returns the bodies of md's fenced code blocks.
func CodeBlocks(md string) []string {
	var out []string
	for _, b := range FencedBlocks(md) {
		out = append(out, b.Body)
	}
	return out
}

// Commands returns a code block's shell commands, one per line, without
// comments or blank lines.
func Commands(block string) []string {
	var cmds []string
	for _, line := range strings.Split(block, "\n") {
		if i := strings.Index(line, " #"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmds = append(cmds, line)
	}
	return cmds
}
