package graphworld

// Span returns the states [start, end) of episode i of the walk.
func (r *Result) Span(i int) (start, end int64) {
	start, end = r.EpisodeStart[i], int64(len(r.Actions))
	if i+1 < len(r.EpisodeStart) {
		end = r.EpisodeStart[i+1]
	}
	return start, end
}
