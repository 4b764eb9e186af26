package ops

import "testing"

// A sum is split from splitFrom terms on (when its outputs leave room),
// its chunks cover every term once, no item of its first kernel adds more
// than maxChunkTerms of them, and no chunk fewer than minChunkTerms, nor
// are there more than maxChunks chunks, unless the bound of
// maxChunkTerms needs it.
func TestSplitSumBounds(t *testing.T) {
	for _, outputs := range []int64{1, 3, 10, 64, 288, 18432, 1 << 20} {
		for _, count := range []int64{0, 1, 63, 64, 65, 255, 256, 1000, 1024, 1025, 12544, 50176, 300000, 1 << 28} {
			s := newSplitSum(outputs, count)
			switch {
			case s.chunks < 1:
				t.Errorf("(%d, %d): %d chunks", outputs, count, s.chunks)
			case s.terms() > maxChunkTerms:
				t.Errorf("(%d, %d): chunks of %d terms, more than %d", outputs, count, s.terms(), maxChunkTerms)
			case s.chunks*s.terms() < count || s.chunks > max(count, 1):
				// Chunk j holds the terms t ≡ j (mod chunks): none is
				// empty when there are no more chunks than terms.
				t.Errorf("(%d, %d): %d chunks of at most %d terms do not cover the terms once", outputs, count, s.chunks, s.terms())
			case s.chunks > 1 && s.chunks > ceilDiv(count, maxChunkTerms) && count/s.chunks < minChunkTerms:
				t.Errorf("(%d, %d): %d chunks of fewer than %d terms", outputs, count, s.chunks, minChunkTerms)
			case count < splitFrom && s.chunks != 1:
				t.Errorf("(%d, %d): %d chunks for a short sum", outputs, count, s.chunks)
			case count >= splitFrom && outputs < splitItems/2 && s.chunks == 1:
				t.Errorf("(%d, %d): not split", outputs, count)
			case s.chunks > max(maxChunks, ceilDiv(count, maxChunkTerms)):
				t.Errorf("(%d, %d): %d chunks, more than %d", outputs, count, s.chunks, maxChunks)
			}
			if srcs := s.kernels("", "acc += 1;", "", 0, ""); len(srcs) != min(int(s.chunks), 2) {
				t.Errorf("(%d, %d): %d kernels for %d chunks", outputs, count, len(srcs), s.chunks)
			}
		}
	}
}
