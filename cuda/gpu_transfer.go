package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// stageAlign aligns each upload's place in the staging buffer.
const stageAlign = 64

// upload copies src into the staging buffer and queues its copy to dst
// on the stream, so that it is ordered before the work queued after it
// (a graph's replay too); src may be reused at once. Uploads fill the
// staging buffer one after another; when the next does not fit in what is
// left, upload waits for the stream (the queued copies are then done with
// the buffer) and starts again at its beginning. Uploads larger than the
// buffer (which grows to maxStage) go through it in parts.
func (b *gpuBackend) upload(dst ptr, src unsafe.Pointer, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("cuda: upload of %d bytes", bytes)
	}
	if bytes == 0 {
		return nil
	}
	if err := b.enterUncaptured(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	if err := b.growStage(bytes); err != nil {
		return err
	}
	for done := int64(0); done < bytes; {
		n := min(bytes-done, b.stageCap)
		if b.stageOff+n > b.stageCap {
			if err := b.syncStream(); err != nil {
				return err
			}
		}
		at := unsafe.Add(b.stage, b.stageOff)
		copy(unsafe.Slice((*byte)(at), n), unsafe.Slice((*byte)(unsafe.Add(src, done)), n))
		if r := b.calls.call(b.d.cuMemcpyHtoDAsync, uintptr(dst)+uintptr(done), uintptr(at), uintptr(n), b.stream); r != 0 {
			return b.d.check("cuMemcpyHtoDAsync_v2", fmt.Sprintf("%d bytes", n), r)
		}
		b.stageOff = (b.stageOff + n + stageAlign - 1) &^ (stageAlign - 1)
		done += n
	}
	return nil
}

// download waits for the queued work and copies src to dst, through the
// staging buffer (in parts where it is larger): each part is queued into
// the buffer at its beginning, which the stream orders after the uploads
// still reading it, then waited for and copied out.
func (b *gpuBackend) download(dst unsafe.Pointer, src ptr, bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("cuda: download of %d bytes", bytes)
	}
	if err := b.enterUncaptured(); err != nil {
		return err
	}
	defer runtime.UnlockOSThread()
	if bytes == 0 {
		return b.syncStream()
	}
	if err := b.growStage(bytes); err != nil {
		return err
	}
	for done := int64(0); done < bytes; {
		n := min(bytes-done, b.stageCap)
		if r := b.calls.call(b.d.cuMemcpyDtoHAsync, uintptr(b.stage), uintptr(src)+uintptr(done), uintptr(n), b.stream); r != 0 {
			return b.d.check("cuMemcpyDtoHAsync_v2", fmt.Sprintf("%d bytes", n), r)
		}
		if err := b.syncStream(); err != nil {
			return err
		}
		copy(unsafe.Slice((*byte)(unsafe.Add(dst, done)), n), unsafe.Slice((*byte)(b.stage), n))
		done += n
	}
	return nil
}

// growStage grows the staging buffer towards bytes, doubling it up to
// maxStage, after waiting for the copies that read the old one.
func (b *gpuBackend) growStage(bytes int64) error {
	if bytes <= b.stageCap || b.stageCap >= maxStage {
		return nil
	}
	want := b.stageCap
	for want < bytes && want < maxStage {
		want *= 2
	}
	if err := b.syncStream(); err != nil {
		return err
	}
	p, err := b.allocHost(want)
	if err != nil {
		return err
	}
	old := b.stage
	b.stage, b.stageCap, b.stageOff = p, want, 0
	return b.d.check("cuMemFreeHost", "staging buffer", b.d.cuMemFreeHost(old))
}
