package step

import "github.com/modelgate/modelgate/persistence"

// daily is the current day's counter of one media kind.
func (a *Account) daily(kind string, limit int64) Counter {
	d := Counter{Limit: limit, ResetsAt: a.Rec.Day + Day, Used: a.Rec.Images}
	if kind == persistence.MediaVideo {
		d.Used = a.Rec.Video
	}
	for _, h := range a.Rec.Media {
		if h.Kind == kind && h.Day == a.Rec.Day {
			d.Reserved += h.Amount
		}
	}
	return d
}

// mediaReserve reserves N of today's images or video seconds, or refuses until 00:00 UTC.
func (a *Account) mediaReserve(c *Command, now int64, r *Result) {
	if c.N <= 0 || c.Media != persistence.MediaImages && c.Media != persistence.MediaVideo {
		r.Fail = Invalid
		return
	}
	a.rollDay(floorSec(now), r)
	limit, refusal := c.Plan.ImageDailyLimit, LimitImages
	if c.Media == persistence.MediaVideo {
		limit, refusal = c.Plan.VideoDailySeconds, LimitVideo
	}
	d := a.daily(c.Media, limit)
	if limit > 0 && d.Used+d.Reserved+c.N > limit {
		r.Refused, r.ResetsAt, r.RetryAfter, r.Daily = refusal, d.ResetsAt, d.ResetsAt*1e9-now, d
		return
	}
	a.NextID++
	h := persistence.MediaHold{ID: a.NextID, Kind: c.Media, Amount: c.N, Day: a.Rec.Day}
	if c.TTL > 0 && c.Media == persistence.MediaImages {
		h.Expires = now + c.TTL
	}
	a.Rec.Media = append(a.Rec.Media, h)
	d.Reserved += c.N
	r.Admitted, r.ID, r.Daily, r.Dirty = true, a.NextID, d, true
}
