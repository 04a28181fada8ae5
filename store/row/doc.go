// Package row is how the warehouse writes facts and restores as row values,
// the same on every engine (store/sqlite, store/postgres): a history row's
// facts array, the keys that make re-imports add nothing (HistoryKey,
// LogKey, HostHash), the names in the warehouse's form, and a derived
// restore's row with its content hash. Two engines that wrote these
// differently would derive different restores from the same files.
package row

// nullString is NULL (nil) for an empty string.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
