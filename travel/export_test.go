package travel

// SetCandidateBounds lowers the bounds of a search's candidate flights for a test, until restore.
func SetCandidateBounds(perDay, rows int) (restore func()) {
	d, r := maxCandidates, maxCandidateRows
	maxCandidates, maxCandidateRows = perDay, rows
	return func() { maxCandidates, maxCandidateRows = d, r }
}

// CargoHold returns the lower deck figures of an aircraft type: its volume in litres and its
// maximum payload in kg; ok is false for a type without any.
func CargoHold(typeCode string) (litres, payloadKg int, ok bool) {
	h, ok := holds[typeCode]
	return h.litres, h.payloadKg, ok
}
