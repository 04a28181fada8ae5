package main

import (
	"bytes"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// helpPrinter prints kong's help with each command's summary saying which
// required flags are alternatives: kong lists the members of a required
// xor group side by side ("report --regression=ID --builds=A,B"), which
// reads as if both were needed; this prints
// "report (--regression=ID | --builds=A,B)".
func helpPrinter(opts kong.HelpOptions, ctx *kong.Context) error {
	var buf bytes.Buffer
	out := ctx.Stdout
	ctx.Stdout = &buf
	err := kong.DefaultHelpPrinter(opts, ctx)
	ctx.Stdout = out
	if err != nil {
		return err
	}
	text := buf.String()
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		if kongs, ours := n.FlagSummary(true), xorFlagSummary(n); kongs != ours {
			text = strings.ReplaceAll(text, n.Summary(), strings.Replace(n.Summary(), kongs, ours, 1))
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(ctx.Model.Node)
	_, err = out.Write([]byte(text))
	return err
}

// xorFlagSummary is kong's FlagSummary with adjacent required flags of one
// xor group joined as "(--a=X | --b=Y)".
func xorFlagSummary(n *kong.Node) string {
	var parts []string
	var prev *kong.Flag
	for _, group := range n.AllFlags(true) {
		for _, f := range group {
			if !f.Required {
				continue
			}
			if prev != nil && shareXor(prev, f) {
				last := strings.TrimSuffix(strings.TrimPrefix(parts[len(parts)-1], "("), ")")
				parts[len(parts)-1] = "(" + last + " | " + f.Summary() + ")"
			} else {
				parts = append(parts, f.Summary())
			}
			prev = f
		}
	}
	return strings.Join(parts, " ")
}

func shareXor(a, b *kong.Flag) bool {
	for _, x := range a.Xor {
		if slices.Contains(b.Xor, x) {
			return true
		}
	}
	return false
}
