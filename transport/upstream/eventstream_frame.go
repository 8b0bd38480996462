package upstream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// AWS event-stream framing (the "vnd.amazon.eventstream" content type): each message is
//
//	total length (4) | headers length (4) | prelude CRC (4) | headers | payload | message CRC (4)
//
// big-endian, both CRCs CRC-32 (IEEE), the message's over every byte before it. A header is
// a name (1-byte length), a type byte and a typed value; Bedrock's are strings (type 7:
// 2-byte length). This reader keeps one buffer for the stream and returns views into it.

// maxFrame bounds one message, as AWS's own decoders do (16 MiB).
const maxFrame = 16 << 20

const preludeLen, crcLen = 12, 4

var errFrame = errors.New("bedrock event stream: malformed frame")

// frame is one decoded message; its slices point into the reader's buffer.
type frame struct {
	messageType, eventType, exceptionType, errorCode, errorMessage []byte
	payload                                                        []byte
}

type frameReader struct {
	r       io.Reader
	prelude [preludeLen]byte
	buf     []byte
}

// next reads one message. io.EOF: the stream ended between messages; io.ErrUnexpectedEOF:
// inside one.
func (fr *frameReader) next(f *frame) error {
	prelude := fr.prelude[:]
	if n, err := io.ReadFull(fr.r, prelude); err != nil {
		if err == io.EOF && n == 0 {
			return io.EOF
		}
		return io.ErrUnexpectedEOF
	}
	total := binary.BigEndian.Uint32(prelude[0:4])
	headers := binary.BigEndian.Uint32(prelude[4:8])
	if crc32.ChecksumIEEE(prelude[:8]) != binary.BigEndian.Uint32(prelude[8:12]) {
		return fmt.Errorf("%w: prelude CRC", errFrame)
	}
	if total > maxFrame || total < preludeLen+crcLen || uint64(headers) > uint64(total)-preludeLen-crcLen {
		return fmt.Errorf("%w: lengths %d/%d", errFrame, total, headers)
	}
	rest := int(total) - preludeLen
	if cap(fr.buf) < rest {
		fr.buf = make([]byte, rest)
	}
	b := fr.buf[:rest]
	if _, err := io.ReadFull(fr.r, b); err != nil {
		return io.ErrUnexpectedEOF
	}
	sum := crc32.Update(crc32.ChecksumIEEE(prelude), crc32.IEEETable, b[:rest-crcLen])
	if sum != binary.BigEndian.Uint32(b[rest-crcLen:]) {
		return fmt.Errorf("%w: message CRC", errFrame)
	}
	*f = frame{payload: b[headers : rest-crcLen]}
	return f.readHeaders(b[:headers])
}

// readHeaders keeps the string headers Bedrock sends and skips every other typed value.
func (f *frame) readHeaders(h []byte) error {
	for len(h) > 0 {
		n := int(h[0])
		if len(h) < 1+n+1 {
			return errFrame
		}
		name, typ := h[1:1+n], h[1+n]
		h = h[2+n:]
		var size int
		switch typ {
		case 0, 1: // true, false
		case 2:
			size = 1
		case 3:
			size = 2
		case 4:
			size = 4
		case 5, 8: // long, timestamp
			size = 8
		case 9: // uuid
			size = 16
		case 6, 7: // bytes, string
			if len(h) < 2 {
				return errFrame
			}
			size = 2 + int(binary.BigEndian.Uint16(h))
		default:
			return errFrame
		}
		if len(h) < size {
			return errFrame
		}
		if typ == 7 {
			v := h[2:size]
			switch string(name) {
			case ":message-type":
				f.messageType = v
			case ":event-type":
				f.eventType = v
			case ":exception-type":
				f.exceptionType = v
			case ":error-code":
				f.errorCode = v
			case ":error-message":
				f.errorMessage = v
			}
		}
		h = h[size:]
	}
	return nil
}
