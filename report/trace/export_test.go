package trace

// SetChunkBytes caps the chunks a stream's lines are parsed in, and how
// many are parsed at once; it returns the setting it replaced.
func SetChunkBytes(n, workers int) (int, int) {
	on, ow := chunkBytes, chunkWorkers
	chunkBytes, chunkWorkers = n, workers
	return on, ow
}
