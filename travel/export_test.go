package travel

// SetCandidateBounds lowers the bounds of a search's candidate flights for a test, until restore.
func SetCandidateBounds(perDay, rows int) (restore func()) {
	d, r := maxCandidates, maxCandidateRows
	maxCandidates, maxCandidateRows = perDay, rows
	return func() { maxCandidates, maxCandidateRows = d, r }
}
