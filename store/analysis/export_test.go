package analysis

// SetChunkRestoresForTest sets how many restores one group of Run holds
// and returns what puts it back.
func SetChunkRestoresForTest(n int64) (restore func()) {
	old := chunkRestores
	chunkRestores = n
	return func() { chunkRestores = old }
}

// GroupsRunForTest counts the groups Run has judged.
func GroupsRunForTest() int64 { return groupsRun.Load() }
