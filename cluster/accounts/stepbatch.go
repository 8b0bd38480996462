package accounts

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Forwarded steps travel in batches (docs/cluster.md, "Forwarded steps, one request per
// batch"): a node sends every step it has for another node, of any shard, in one request,
// and that node answers each step in the response as soon as its answer is known, so a fast
// admission is not held behind a settle waiting for its entry. The encoding is hand-written:
//
//	request:  repeated { uvarint shard, uvarint length, command }
//	response: repeated { uvarint index, answer kind (1 byte), uvarint leader, uvarint length, body }
//
// index is the step's place in the request; leader names the shard's leader, when known,
// in a not-leader answer; body is the step's result, or the error's text.
const (
	// maxBatchSteps bounds the steps of one forwarded batch (a request of more is refused).
	maxBatchSteps = 512
	// maxBatchBody bounds a batch's request body and each answer's body.
	maxBatchBody = 8 << 20
)

// answerKind is how a forwarded step ended on the node that took it.
type answerKind byte

const (
	answerResult    answerKind = iota // body: the step's result
	answerNotLeader                   // the node does not lead the shard; leader: who does, 0 when unknown
	answerMalformed                   // the command does not decode: resending it cannot help
	answerFailed                      // outcome unknown (body: why): the sender tries again
)

// batchStep is one step of a forwarded batch.
type batchStep struct {
	shard uint64
	cmd   []byte
}

// batchAnswer is the answer to the step at index of a forwarded batch.
type batchAnswer struct {
	index  int
	kind   answerKind
	leader uint64
	body   []byte
}

// answerOfStep is the answer a step's Lead result makes; leaderOf names the shard's leader
// for a not-leader answer.
func answerOfStep(index int, out []byte, err error, leaderOf func() uint64) batchAnswer {
	switch {
	case err == nil:
		return batchAnswer{index: index, body: out}
	case errors.Is(err, ErrNotLeader):
		return batchAnswer{index: index, kind: answerNotLeader, leader: leaderOf(), body: []byte(err.Error())}
	case errors.Is(err, errMalformedStep):
		return batchAnswer{index: index, kind: answerMalformed, body: []byte(err.Error())}
	default:
		return batchAnswer{index: index, kind: answerFailed, body: []byte(err.Error())}
	}
}

// result is the answer as Forward.Step returns it, from node.
func (a batchAnswer) result(node uint64) ([]byte, error) {
	switch a.kind {
	case answerResult:
		return a.body, nil
	case answerNotLeader:
		return nil, &NotLeaderError{Leader: a.leader}
	case answerMalformed:
		return nil, fmt.Errorf("accounts: node %d refused a step: %s", node, a.body)
	default:
		return nil, fmt.Errorf("accounts: node %d: %s", node, a.body)
	}
}

func appendStep(b []byte, s batchStep) []byte {
	b = binary.AppendUvarint(b, s.shard)
	b = binary.AppendUvarint(b, uint64(len(s.cmd)))
	return append(b, s.cmd...)
}

func appendAnswer(b []byte, a batchAnswer) []byte {
	b = binary.AppendUvarint(b, uint64(a.index))
	b = append(b, byte(a.kind))
	b = binary.AppendUvarint(b, a.leader)
	b = binary.AppendUvarint(b, uint64(len(a.body)))
	return append(b, a.body...)
}

var errBadBatch = errors.New("accounts: a forwarded batch that does not decode")

// decodeSteps is a batch's request body: at least one step, at most maxBatchSteps.
func decodeSteps(b []byte) ([]batchStep, error) {
	var steps []batchStep
	for len(b) > 0 {
		if len(steps) == maxBatchSteps {
			return nil, fmt.Errorf("%w: more than %d steps", errBadBatch, maxBatchSteps)
		}
		shard, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, fmt.Errorf("%w: step %d's shard", errBadBatch, len(steps))
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, fmt.Errorf("%w: step %d's length", errBadBatch, len(steps))
		}
		b = b[n:]
		steps = append(steps, batchStep{shard: shard, cmd: b[:size:size]})
		b = b[size:]
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("%w: no step", errBadBatch)
	}
	return steps, nil
}

// readBatchAnswer reads the next answer of a batch of n steps from r.
func readBatchAnswer(r *bufio.Reader, n int) (batchAnswer, error) {
	index, err := binary.ReadUvarint(r)
	if err != nil {
		return batchAnswer{}, err
	}
	if index >= uint64(n) {
		return batchAnswer{}, fmt.Errorf("%w: an answer to step %d of %d", errBadBatch, index, n)
	}
	kind, err := r.ReadByte()
	if err != nil {
		return batchAnswer{}, noEOF(err)
	}
	if answerKind(kind) > answerFailed {
		return batchAnswer{}, fmt.Errorf("%w: answer kind %d", errBadBatch, kind)
	}
	leader, err := binary.ReadUvarint(r)
	if err != nil {
		return batchAnswer{}, noEOF(err)
	}
	size, err := binary.ReadUvarint(r)
	if err != nil {
		return batchAnswer{}, noEOF(err)
	}
	if size > maxBatchBody {
		return batchAnswer{}, fmt.Errorf("%w: an answer of %d bytes", errBadBatch, size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		return batchAnswer{}, noEOF(err)
	}
	return batchAnswer{index: int(index), kind: answerKind(kind), leader: leader, body: body}, nil
}

// noEOF is err inside an answer: the stream ended in the middle of one.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
