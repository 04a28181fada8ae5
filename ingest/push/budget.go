package push

import (
	"fmt"

	"github.com/restorewatch/restorewatch/store"
)

// decodeBudget counts what the lines of one batch decode into.
type decodeBudget struct {
	objects, values, mapMembers int
}

// take scans one line's text before it is decoded and charges its objects
// and values to the batch; an error (wrapping ErrTooLarge) names the limit.
// The scan is a byte loop that only tracks strings, so it costs far less
// than the decoding it guards and allocates nothing.
func (b *decodeBudget) take(text []byte) error {
	objects, values, longest, widest, mapMembers := shape(text)
	switch {
	case widest > MaxMembers:
		return fmt.Errorf("a JSON object of %d members, at most %d: %w", widest, MaxMembers, ErrTooLarge)
	case objects > MaxLineObjects:
		return fmt.Errorf("%d JSON objects on one line, at most %d (a backup set holds at most %d files and %d media families): %w",
			objects, MaxLineObjects, store.MaxBackupFiles, store.MaxMediaFamilies, ErrTooLarge)
	case longest > MaxString:
		return fmt.Errorf("a string of %d bytes, at most %d: %w", longest, MaxString, ErrTooLarge)
	}
	b.objects += objects
	b.values += values
	b.mapMembers += mapMembers
	switch {
	case b.mapMembers > MaxMapMembers:
		return fmt.Errorf("more than %d members of map-shaped objects (a host's facts, tags) in the batch: %w", MaxMapMembers, ErrTooLarge)
	case b.objects > MaxObjects:
		return fmt.Errorf("more than %d JSON objects in the batch: %w", MaxObjects, ErrTooLarge)
	case b.values > MaxValues:
		return fmt.Errorf("more than %d JSON values in the batch: %w", MaxValues, ErrTooLarge)
	}
	return nil
}

// shape counts the objects ('{') and values (',' and '[' separate or open
// members and elements) of a line of JSON outside its strings, the byte
// length of its longest string, the members of its widest object, and the
// members of its objects wider than structWidth (map-shaped: a host's
// Extra facts, tags; no record type has that many fields). A map costs
// far more decoded than its text, so maps are bounded like arrays.
func shape(text []byte) (objects, values, longest, widest, mapMembers int) {
	in, esc, start := false, false, 0
	// members of each open object or array (-1 marks an array), innermost last
	var open [64]int
	depth := 0
	closeObject := func() {
		if depth == 0 {
			return
		}
		depth--
		if n := open[depth]; n >= 0 {
			widest = max(widest, n)
			if n > structWidth {
				mapMembers += n
			}
		}
	}
	for i, c := range text {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			if in {
				longest = max(longest, i-start)
			} else if depth > 0 && depth <= len(open) && open[depth-1] == 0 {
				open[depth-1] = 1 // an object's first member
			}
			in, start = !in, i+1
		case in:
		case c == '{':
			objects++
			values++
			if depth < len(open) {
				open[depth] = 0
			}
			depth++
		case c == '[':
			values++
			if depth < len(open) {
				open[depth] = -1
			}
			depth++
		case c == ',':
			values++
			if depth > 0 && depth <= len(open) && open[depth-1] >= 0 {
				open[depth-1]++
			}
		case c == '}' || c == ']':
			if depth > len(open) {
				depth--
				continue
			}
			closeObject()
		}
	}
	return objects, values, longest, widest, mapMembers
}

// check applies the store's validation to what a line carries besides
// restore records (those are validated, and rejected with their origin, as
// they are imported): a backup set's limits and times, a run's times.
func (l line) check() error {
	switch {
	case l.Backup != nil:
		return l.Backup.Validate()
	case l.Run != nil:
		return l.Run.Validate()
	}
	return nil
}
