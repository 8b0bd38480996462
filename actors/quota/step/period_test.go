package step

import (
	"testing"
	"time"
)

func TestPeriodStart(t *testing.T) {
	u := func(s string) int64 {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.Unix()
	}
	cases := []struct {
		name         string
		t, anchor, n int64
		want         int64
	}{
		{"epoch 5h, last second", u("2026-03-04T05:59:59Z"), 0, 5 * 3600, u("2026-03-04T01:00:00Z")},
		{"epoch 5h, boundary", u("2026-03-04T06:00:00Z"), 0, 5 * 3600, u("2026-03-04T06:00:00Z")},
		{"anchor after t", u("2026-03-04T07:59:59Z"), u("2030-01-01T02:00:00Z"), 5 * 3600, u("2026-03-04T03:00:00Z")},
		{"t exactly anchor-n", u("2029-12-31T21:00:00Z"), u("2030-01-01T02:00:00Z"), 5 * 3600, u("2029-12-31T21:00:00Z")},
		{"week before Monday", u("2026-03-08T23:59:59Z"), firstMonday, Week, u("2026-03-02T00:00:00Z")},
		{"week at Monday", u("2026-03-09T00:00:00Z"), firstMonday, Week, u("2026-03-09T00:00:00Z")},
		{"day last second", u("2026-03-04T23:59:59Z"), 0, Day, u("2026-03-04T00:00:00Z")},
		{"day boundary", u("2026-03-05T00:00:00Z"), 0, Day, u("2026-03-05T00:00:00Z")},
	}
	for _, c := range cases {
		if got := PeriodStart(c.t, c.anchor, c.n); got != c.want {
			t.Errorf("%s: periodStart = %s, want %s", c.name, time.Unix(got, 0).UTC(), time.Unix(c.want, 0).UTC())
		}
	}
}
