package simulator

import (
	"encoding/binary"
)

// A minimal but real MP4 (ISO/IEC 14496-12) for finished video jobs: one video track of
// uncompressed RGB frames (QuickTime's 'raw ' sample entry, 24 bits per pixel, which ffmpeg
// and other demuxers decode), one frame per second, so the file is small, plays, and lasts
// exactly the job's seconds. Layout ("fast start": the index before the data):
//
//	ftyp  isom, minor 512, compatible isom iso2 mp41
//	moov  mvhd (timescale 1000, duration seconds·1000)
//	      trak  tkhd, mdia (mdhd, hdlr 'vide', minf (vmhd, dinf/dref/url, stbl (stsd 'raw ',
//	            stts, stsc, stsz, stco)))
//	mdat  the frames, one chunk
//
// Every creation and modification time is 0 (1904-01-01), so the bytes depend only on the
// job's prompt, size and seconds.

const (
	// maxVideoSide is the longer side of the frames; the requested size is scaled down by an
	// integer factor (720x1280 → 36x64) and each side rounded down to an even number.
	maxVideoSide = 64
	// mp4Timescale is the movie and media timescale: units per second.
	mp4Timescale = 1000
)

// videoFrameSize is the frame size for a requested video size.
func videoFrameSize(w, h int) (int, int) {
	fw, fh := scaleDown(w, h, maxVideoSide)
	return max(fw&^1, 2), max(fh&^1, 2)
}

// buildMP4 returns the MP4 of a video of seconds seconds, w×h frames (even sides) drawn from
// seed.
func buildMP4(seed uint64, w, h, seconds int) []byte {
	frameBytes := w * h * 3
	frames := make([]byte, 0, seconds*frameBytes)
	for k := range seconds {
		img := picture(seed, w, h, k*max(w/8, 1))
		for i := 0; i < len(img.Pix); i += 4 {
			frames = append(frames, img.Pix[i], img.Pix[i+1], img.Pix[i+2])
		}
	}
	ftyp := box("ftyp", []byte("isom"), u32(512), []byte("isomiso2mp41"))
	// moov's size does not depend on the chunk offset it holds, so build it once to measure.
	offset := len(ftyp) + len(mp4Moov(w, h, seconds, frameBytes, 0)) + 8
	moov := mp4Moov(w, h, seconds, frameBytes, offset)
	out := make([]byte, 0, offset+len(frames))
	out = append(append(out, ftyp...), moov...)
	return append(out, box("mdat", frames)...)
}

// mp4Moov is the movie box; dataOffset is the file offset of the first frame.
func mp4Moov(w, h, seconds, frameBytes, dataOffset int) []byte {
	duration := u32(uint32(seconds * mp4Timescale))
	matrix := cat(u32(0x00010000), u32(0), u32(0), u32(0), u32(0x00010000), u32(0), u32(0), u32(0), u32(0x40000000))
	mvhd := fullBox("mvhd", 0, 0, u32(0), u32(0), u32(mp4Timescale), duration,
		u32(0x00010000), u16(0x0100), make([]byte, 10), matrix, make([]byte, 24), u32(2))
	tkhd := fullBox("tkhd", 0, 3 /* enabled, in movie */, u32(0), u32(0), u32(1), u32(0), duration,
		make([]byte, 8), u16(0), u16(0), u16(0), u16(0), matrix, u32(uint32(w)<<16), u32(uint32(h)<<16))
	mdhd := fullBox("mdhd", 0, 0, u32(0), u32(0), u32(mp4Timescale), duration, u16(0x55c4 /* "und" */), u16(0))
	hdlr := fullBox("hdlr", 0, 0, u32(0), []byte("vide"), make([]byte, 12), []byte("VideoHandler\x00"))
	vmhd := fullBox("vmhd", 0, 1, u16(0), make([]byte, 6))
	dinf := box("dinf", fullBox("dref", 0, 0, u32(1), fullBox("url ", 0, 1 /* data in this file */)))
	// VisualSampleEntry 'raw ': reserved (6 bytes), data_reference_index 1, pre_defined and
	// reserved (16), width, height, 72 dpi twice, reserved, frame_count 1, compressorname
	// (32, empty), depth 24 (RGB), pre_defined -1.
	sampleEntry := box("raw ", make([]byte, 6), u16(1), make([]byte, 16), u16(uint16(w)), u16(uint16(h)),
		u32(0x00480000), u32(0x00480000), u32(0), u16(1), make([]byte, 32), u16(24), u16(0xffff))
	n := uint32(seconds)
	stbl := box("stbl",
		fullBox("stsd", 0, 0, u32(1), sampleEntry),
		fullBox("stts", 0, 0, u32(1), u32(n), u32(mp4Timescale)), // n samples of one second
		fullBox("stsc", 0, 0, u32(1), u32(1), u32(n), u32(1)),    // one chunk of n samples
		fullBox("stsz", 0, 0, u32(uint32(frameBytes)), u32(n)),   // every frame the same size
		fullBox("stco", 0, 0, u32(1), u32(uint32(dataOffset))))
	minf := box("minf", vmhd, dinf, stbl)
	trak := box("trak", tkhd, box("mdia", mdhd, hdlr, minf))
	return box("moov", mvhd, trak)
}

// box is an ISO-BMFF box: 32-bit size, type, payload.
func box(typ string, payload ...[]byte) []byte {
	body := cat(payload...)
	return cat(u32(uint32(8+len(body))), []byte(typ), body)
}

// fullBox is a box whose payload starts with a version byte and 24 bits of flags.
func fullBox(typ string, version byte, flags uint32, payload ...[]byte) []byte {
	return box(typ, append([][]byte{u32(uint32(version)<<24 | flags&0xffffff)}, payload...)...)
}

func cat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
