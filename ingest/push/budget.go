package push

import (
	"fmt"

	"github.com/restorewatch/restorewatch/store"
)

// decodeBudget counts what the lines of one batch decode into.
type decodeBudget struct {
	objects, values int
}

// take scans one line's text before it is decoded and charges its objects
// and values to the batch; an error (wrapping ErrTooLarge) names the limit.
// The scan is a byte loop that only tracks strings, so it costs far less
// than the decoding it guards and allocates nothing.
func (b *decodeBudget) take(text []byte) error {
	objects, values, longest := shape(text)
	switch {
	case objects > MaxLineObjects:
		return fmt.Errorf("%d JSON objects on one line, at most %d (a backup set holds at most %d files and %d media families): %w",
			objects, MaxLineObjects, store.MaxBackupFiles, store.MaxMediaFamilies, ErrTooLarge)
	case longest > MaxString:
		return fmt.Errorf("a string of %d bytes, at most %d: %w", longest, MaxString, ErrTooLarge)
	}
	b.objects += objects
	b.values += values
	switch {
	case b.objects > MaxObjects:
		return fmt.Errorf("more than %d JSON objects in the batch: %w", MaxObjects, ErrTooLarge)
	case b.values > MaxValues:
		return fmt.Errorf("more than %d JSON values in the batch: %w", MaxValues, ErrTooLarge)
	}
	return nil
}

// shape counts the objects ('{') and values (',' and '[' separate or open
// members and elements) of a line of JSON outside its strings, and the
// byte length of its longest string.
func shape(text []byte) (objects, values, longest int) {
	in, esc, start := false, false, 0
	for i, c := range text {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			if in {
				longest = max(longest, i-start)
			}
			in, start = !in, i+1
		case in:
		case c == '{':
			objects++
			values++
		case c == ',' || c == '[':
			values++
		}
	}
	return objects, values, longest
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
