package step

import (
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/bincode"
	"github.com/modelgate/modelgate/persistence"
)

// The binary encodings of Account, Command and Result: every field in a fixed order, no
// names, no reflection (a replica decodes a command and the account it steps, and encodes
// the account and the result, for every step of the cluster: with msgpack's reflection
// that was half of an apply). Each starts with binaryV1; a record that starts with
// anything else is msgpack, as records written before were (codec.go), and still decodes.
// A field added to one of these types must be added here, in both directions: the
// round-trip test fills every field and compares with the msgpack encoding.
const binaryV1 = 0x01

func isBinary(b []byte) bool { return len(b) > 0 && b[0] == binaryV1 }

// AppendBinary appends a's binary encoding to dst.
func (a *Account) AppendBinary(dst []byte) []byte {
	w := bincode.Writer{B: append(dst, binaryV1)}
	a.Rec.WriteBinary(&w)
	w.Uint(uint64(len(a.Calls)))
	for i := range a.Calls {
		writeCall(&w, &a.Calls[i])
	}
	writeSlide(&w, a.Burst)
	w.Uint(uint64(len(a.Keys)))
	for i := range a.Keys {
		k := &a.Keys[i]
		w.String(k.ID)
		writeSlide(&w, k.Recent)
		w.Int(k.Act.Width)
		w.Int(k.Act.Last)
		for _, n := range k.Act.N {
			w.Uint(uint64(n))
		}
		w.Uint(uint64(k.Epoch))
		w.Int(k.ThrottledUntil)
		writeSlide(&w, k.RPM)
	}
	w.Uint(a.NextID)
	w.Int(a.Last)
	w.Int(a.WinReserved)
	w.Int(a.WeekReserved)
	w.Int(int64(a.Held))
	if a.Lost != nil { // optional when reading: records written before it end here
		w.Uint(uint64(len(a.Lost.Calls)))
		for _, l := range a.Lost.Calls {
			w.Uint(l.ID)
			w.Int(l.Until)
		}
	}
	return w.B
}

func (a *Account) readBinary(r *bincode.Reader) {
	a.Rec.ReadBinary(r)
	if n := r.Len(8); n > 0 {
		a.Calls = make([]Call, n)
		for i := range a.Calls {
			readCall(r, &a.Calls[i])
		}
	}
	a.Burst = readSlide(r)
	if n := r.Len(actBuckets + 6); n > 0 {
		a.Keys = make([]Key, n)
		for i := range a.Keys {
			k := &a.Keys[i]
			k.ID = r.String()
			k.Recent = readSlide(r)
			k.Act.Width = r.Int()
			k.Act.Last = r.Int()
			for j := range k.Act.N {
				k.Act.N[j] = uint32(r.Uint())
			}
			k.Epoch = uint32(r.Uint())
			k.ThrottledUntil = r.Int()
			k.RPM = readSlide(r)
		}
	}
	a.NextID = r.Uint()
	a.Last = r.Int()
	a.WinReserved = r.Int()
	a.WeekReserved = r.Int()
	a.Held = money.Amount(r.Int())
	if r.More() {
		a.Lost = &LostCalls{Calls: make([]LostCall, r.Len(2))}
		for i := range a.Lost.Calls {
			a.Lost.Calls[i] = LostCall{ID: r.Uint(), Until: r.Int()}
		}
	}
}

func writeCall(w *bincode.Writer, c *Call) {
	w.Uint(c.ID)
	writePlan(w, &c.Plan)
	w.Int(c.Units)
	w.Bool(c.InPlan)
	w.Int(c.WinStart)
	w.Int(c.WeekStart)
	w.Bool(c.Paid)
	w.Int(int64(c.Hold))
	w.Int(c.Expires)
	w.String(c.Key)
	w.Int(c.At)
	w.Uint(uint64(c.Epoch))
	w.Bool(c.Budgeted)
	w.Int(int64(c.KeyHold))
	w.Uint(c.Node)
	w.Uint(c.Inc)
}

func readCall(r *bincode.Reader, c *Call) {
	c.ID = r.Uint()
	readPlan(r, &c.Plan)
	c.Units = r.Int()
	c.InPlan = r.Bool()
	c.WinStart = r.Int()
	c.WeekStart = r.Int()
	c.Paid = r.Bool()
	c.Hold = money.Amount(r.Int())
	c.Expires = r.Int()
	c.Key = r.String()
	c.At = r.Int()
	c.Epoch = uint32(r.Uint())
	c.Budgeted = r.Bool()
	c.KeyHold = money.Amount(r.Int())
	c.Node = r.Uint()
	c.Inc = r.Uint()
}

func writePlan(w *bincode.Writer, p *Plan) {
	for _, v := range [...]int64{p.WindowRequests, p.WindowSeconds, p.WindowAnchor, p.WeeklyRequests, p.BurstRPM} {
		w.Int(v)
	}
	w.Bool(p.BurstPerKey)
	for _, v := range [...]int64{p.ImageDailyLimit, p.VideoDailySeconds, int64(p.Overdraft), p.Throttle.RPM, p.Throttle.Trigger, p.Throttle.Width, p.Throttle.Duration} {
		w.Int(v)
	}
}

func readPlan(r *bincode.Reader, p *Plan) {
	for _, f := range [...]*int64{&p.WindowRequests, &p.WindowSeconds, &p.WindowAnchor, &p.WeeklyRequests, &p.BurstRPM} {
		*f = r.Int()
	}
	p.BurstPerKey = r.Bool()
	p.ImageDailyLimit, p.VideoDailySeconds = r.Int(), r.Int()
	p.Overdraft = money.Amount(r.Int())
	p.Throttle.RPM, p.Throttle.Trigger, p.Throttle.Width, p.Throttle.Duration = r.Int(), r.Int(), r.Int(), r.Int()
}

func writeSlide(w *bincode.Writer, s Slide) {
	w.Uint(uint64(len(s)))
	for _, t := range s {
		w.Int(t)
	}
}

func readSlide(r *bincode.Reader) Slide {
	n := r.Len(1)
	if n == 0 {
		return nil
	}
	s := make(Slide, n)
	for i := range s {
		s[i] = r.Int()
	}
	return s
}

// AppendBinary appends c's binary encoding to dst.
func (c *Command) AppendBinary(dst []byte) []byte {
	w := bincode.Writer{B: append(dst, binaryV1)}
	w.Byte(byte(c.Kind))
	w.Int(c.Now)
	writePlan(&w, &c.Plan)
	w.String(c.Key)
	w.Uint(c.ID)
	w.Int(c.Units)
	w.Int(int64(c.Amount))
	w.Int(c.At)
	w.Int(c.TTL)
	w.Bool(c.Counts)
	w.String(c.Media)
	w.Uint(c.MediaID)
	w.Int(c.N)
	w.Bool(c.FromHold)
	writeLogEntry(&w, c.Log)
	w.Bool(c.Prior != nil)
	if c.Prior != nil {
		writeGrant(&w, c.Prior)
	}
	w.Bool(c.KeyLimits != nil)
	if l := c.KeyLimits; l != nil {
		w.Int(int64(l.Budget))
		w.String(l.Period)
		w.Int(l.ExpiresAt)
		w.Int(l.RPM)
	}
	w.Uint(c.Node)
	w.Uint(c.Inc)
	w.Uint(c.Res) // the fields from here on are optional when reading (records written before them)
	w.Bool(c.Late)
	w.Int(c.Reserved)
	return w.B
}

func (c *Command) readBinary(r *bincode.Reader) {
	c.Kind = Kind(r.Byte())
	c.Now = r.Int()
	readPlan(r, &c.Plan)
	c.Key = r.String()
	c.ID = r.Uint()
	c.Units = r.Int()
	c.Amount = money.Amount(r.Int())
	c.At = r.Int()
	c.TTL = r.Int()
	c.Counts = r.Bool()
	c.Media = r.String()
	c.MediaID = r.Uint()
	c.N = r.Int()
	c.FromHold = r.Bool()
	c.Log = readLogEntry(r)
	if r.Bool() {
		c.Prior = &persistence.CreditGrant{}
		readGrant(r, c.Prior)
	}
	if r.Bool() {
		c.KeyLimits = &persistence.KeyLimits{Budget: money.Amount(r.Int()), Period: r.String(), ExpiresAt: r.Int(), RPM: r.Int()}
	}
	c.Node = r.Uint()
	c.Inc = r.Uint()
	if r.More() {
		c.Res = r.Uint()
		c.Late = r.Bool()
		c.Reserved = r.Int()
	}
}

func writeGrant(w *bincode.Writer, g *persistence.CreditGrant) {
	w.Int(g.Amount)
	w.Int(g.At)
	w.Int(g.Balance)
}

func readGrant(r *bincode.Reader, g *persistence.CreditGrant) {
	g.Amount, g.At, g.Balance = r.Int(), r.Int(), r.Int()
}

// writeLogEntry writes a presence flag and, when e is set, its fields.
func writeLogEntry(w *bincode.Writer, e *persistence.LogEntry) {
	w.Bool(e != nil)
	if e == nil {
		return
	}
	w.String(e.RequestID)
	w.Int(e.Time)
	w.String(e.AccountID)
	w.String(e.KeyID)
	w.String(e.Model)
	w.String(e.Route)
	w.Int(int64(e.Status))
	for _, v := range [...]int64{e.InputTokens, e.CachedTokens, e.CacheWriteTokens, e.OutputTokens, e.ReasoningTokens, e.LatencyMs, e.TTFTMs, e.Cost, e.ListCost, e.UpstreamCost} {
		w.Int(v)
	}
	w.String(e.ClientFormat)
	w.String(e.UpstreamFormat)
	w.Int(int64(e.Attempts))
	w.Bool(e.Stream)
	w.Bool(e.Counted)
	w.Int(e.AllowanceUnits)
	w.Uint(e.Seq)
}

func readLogEntry(r *bincode.Reader) *persistence.LogEntry {
	if !r.Bool() {
		return nil
	}
	e := &persistence.LogEntry{}
	e.RequestID = r.String()
	e.Time = r.Int()
	e.AccountID, e.KeyID, e.Model, e.Route = r.String(), r.String(), r.String(), r.String()
	e.Status = int(r.Int())
	for _, p := range [...]*int64{&e.InputTokens, &e.CachedTokens, &e.CacheWriteTokens, &e.OutputTokens, &e.ReasoningTokens, &e.LatencyMs, &e.TTFTMs, &e.Cost, &e.ListCost, &e.UpstreamCost} {
		*p = r.Int()
	}
	e.ClientFormat, e.UpstreamFormat = r.String(), r.String()
	e.Attempts = int(r.Int())
	e.Stream, e.Counted = r.Bool(), r.Bool()
	e.AllowanceUnits = r.Int()
	e.Seq = r.Uint()
	return e
}

// appendResultBinary appends r's binary encoding to dst; ok is false for a result with a
// View (the admin view, never on the hot path), which stays msgpack.
func (r *Result) appendBinary(dst []byte) ([]byte, bool) {
	if r.View != nil {
		return dst, false
	}
	w := bincode.Writer{B: append(dst, binaryV1)}
	w.Byte(byte(r.Fail))
	w.Bool(r.Admitted)
	w.Uint(r.ID)
	w.Bool(r.Paid)
	w.String(string(r.Refused))
	w.Int(r.RetryAfter)
	w.Int(r.ResetsAt)
	w.Int(r.MaxRPM)
	w.Int(r.Burst.Limit)
	w.Int(r.Burst.Remaining)
	w.Int(r.Burst.Reset)
	w.Bool(r.Counted)
	w.Int(int64(r.Charged))
	w.Int(int64(r.Balance))
	w.Bool(r.Added)
	w.Bool(r.Repeat)
	w.Int(r.Daily.Used)
	w.Int(r.Daily.Reserved)
	w.Int(r.Daily.Limit)
	w.Int(r.Daily.ResetsAt)
	w.Int(int64(r.Moved))
	w.Uint(uint64(len(r.Expired)))
	for _, id := range r.Expired {
		w.Uint(id)
	}
	w.Bool(r.Dirty)
	writeLogEntry(&w, r.Log)
	w.String(r.Grant.Key)
	writeGrant(&w, &r.Grant.Grant)
	w.String(r.KeyChanged)
	writeStrings(&w, r.Forgotten)
	writeStrings(&w, r.Advanced)
	return w.B, true
}

func (r *Result) readBinary(rd *bincode.Reader) {
	r.Fail = Failure(rd.Byte())
	r.Admitted = rd.Bool()
	r.ID = rd.Uint()
	r.Paid = rd.Bool()
	r.Refused = Limit(rd.String())
	r.RetryAfter, r.ResetsAt, r.MaxRPM = rd.Int(), rd.Int(), rd.Int()
	r.Burst = Budget{Limit: rd.Int(), Remaining: rd.Int(), Reset: rd.Int()}
	r.Counted = rd.Bool()
	r.Charged, r.Balance = money.Amount(rd.Int()), money.Amount(rd.Int())
	r.Added, r.Repeat = rd.Bool(), rd.Bool()
	r.Daily = Counter{Used: rd.Int(), Reserved: rd.Int(), Limit: rd.Int(), ResetsAt: rd.Int()}
	r.Moved = money.Amount(rd.Int())
	if n := rd.Len(1); n > 0 {
		r.Expired = make([]uint64, n)
		for i := range r.Expired {
			r.Expired[i] = rd.Uint()
		}
	}
	r.Dirty = rd.Bool()
	r.Log = readLogEntry(rd)
	r.Grant.Key = rd.String()
	readGrant(rd, &r.Grant.Grant)
	r.KeyChanged = rd.String()
	r.Forgotten = readStrings(rd)
	r.Advanced = readStrings(rd)
}

func writeStrings(w *bincode.Writer, ss []string) {
	w.Uint(uint64(len(ss)))
	for _, s := range ss {
		w.String(s)
	}
}

func readStrings(r *bincode.Reader) []string {
	n := r.Len(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.String()
	}
	return out
}
