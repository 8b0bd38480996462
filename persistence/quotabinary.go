package persistence

import "github.com/modelgate/modelgate/internal/bincode"

// Records with a hand-written binary encoding (binaryRecord) are written in it by putMsgpack
// and read back by getMsgpackIn: every field in a fixed order, no names, no reflection. The
// encoding starts with binaryV1; a stored record that starts with anything else is msgpack
// (a map starts with 0x80–0x8f, 0xde or 0xdf), as records written before were, and still
// decodes. The quota record is one: every settle writes it, on the single node and on each
// replica of a cluster, where msgpack's reflection was about 13% of an apply.
const binaryV1 = 0x01

type binaryRecord interface {
	appendBinary(dst []byte) []byte
	readBinary(b []byte) error
}

func (q *QuotaRecord) appendBinary(dst []byte) []byte {
	w := bincode.Writer{B: append(dst, binaryV1)}
	q.WriteBinary(&w)
	return w.B
}

func (q *QuotaRecord) readBinary(b []byte) error {
	r := bincode.NewReader(b)
	q.ReadBinary(r)
	return r.Err()
}

// WriteBinary writes q's fields to w in the order ReadBinary reads them (the quota record
// stored alone, and inside a cluster replica's account record). A field added to
// QuotaRecord must be added here and in ReadBinary.
func (q *QuotaRecord) WriteBinary(w *bincode.Writer) {
	for _, v := range [...]int64{q.Balance, q.Spent, q.WindowStart, q.WindowUsed, q.WeekStart, q.WeekUsed, q.Day, q.Images, q.Video} {
		w.Int(v)
	}
	w.Uint(uint64(len(q.Media)))
	for _, h := range q.Media {
		w.Uint(h.ID)
		w.String(h.Kind)
		w.Int(h.Amount)
		w.Int(h.Day)
		w.Int(h.Expires)
	}
	w.Uint(uint64(len(q.Holds)))
	for _, h := range q.Holds {
		w.String(h.Key)
		w.Int(h.Amount)
		w.Int(h.At)
	}
	w.Uint(q.LogSeq)
	w.Uint(uint64(len(q.KeySpend)))
	for _, s := range q.KeySpend {
		w.String(s.KeyID)
		w.String(s.Period)
		w.Int(s.Start)
		w.Int(s.Spent)
	}
}

// ReadBinary reads what WriteBinary wrote; r keeps the first error.
func (q *QuotaRecord) ReadBinary(r *bincode.Reader) {
	for _, p := range [...]*int64{&q.Balance, &q.Spent, &q.WindowStart, &q.WindowUsed, &q.WeekStart, &q.WeekUsed, &q.Day, &q.Images, &q.Video} {
		*p = r.Int()
	}
	if n := r.Len(5); n > 0 {
		q.Media = make([]MediaHold, n)
		for i := range q.Media {
			h := &q.Media[i]
			h.ID, h.Kind, h.Amount, h.Day, h.Expires = r.Uint(), r.String(), r.Int(), r.Int(), r.Int()
		}
	}
	if n := r.Len(3); n > 0 {
		q.Holds = make([]CreditHold, n)
		for i := range q.Holds {
			h := &q.Holds[i]
			h.Key, h.Amount, h.At = r.String(), r.Int(), r.Int()
		}
	}
	q.LogSeq = r.Uint()
	if n := r.Len(4); n > 0 {
		q.KeySpend = make([]KeySpend, n)
		for i := range q.KeySpend {
			s := &q.KeySpend[i]
			s.KeyID, s.Period, s.Start, s.Spent = r.String(), r.String(), r.Int(), r.Int()
		}
	}
}
