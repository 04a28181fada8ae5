package chart_test

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/restorewatch/restorewatch/web/chart"
)

func TestNiceTicks(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name     string
		min, max float64
		n        int
		want     []float64
	}{
		{"unit range", 0, 1, 5, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{"loose ends", 3, 97, 5, []float64{0, 20, 40, 60, 80, 100}},
		{"reversed bounds", 97, 3, 5, []float64{0, 20, 40, 60, 80, 100}},
		{"no float noise", 0.1, 0.3, 3, []float64{0.1, 0.2, 0.3}},
		{"negative", -7, 7, 3, []float64{-10, -5, 0, 5, 10}},
		{"zero span at zero", 0, 0, 5, []float64{-1, -0.5, 0, 0.5, 1}},
		{"zero span", 100, 100, 3, []float64{90, 100, 110}},
		{"big", 0, 2.4e9, 4, []float64{0, 1e9, 2e9, 3e9}},
		{"tiny", 1e-9, 3e-9, 3, []float64{1e-9, 2e-9, 3e-9}},
		{"n below 2", 0, 10, 0, []float64{0, 10}},
		{"NaN", math.NaN(), 1, 5, nil},
		{"Inf", 0, inf, 5, nil},
		{"overflowing span", -math.MaxFloat64, math.MaxFloat64, 5, nil},
		{"below float precision", 1e300, math.Nextafter(1e300, inf), 5, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chart.NiceTicks(tt.min, tt.max, tt.n)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NiceTicks(%g, %g, %d) = %v, want %v", tt.min, tt.max, tt.n, got, tt.want)
			}
		})
	}
}

// The ticks must always cover the data: the chart uses them as its domain.
func TestNiceTicksCoverRange(t *testing.T) {
	for _, r := range [][2]float64{{0.37, 912.5}, {-3.2, -0.001}, {1e-3, 1.7e-3}, {123456, 123457}, {5, 5.0000001}} {
		for n := 2; n <= 12; n++ {
			ticks := chart.NiceTicks(r[0], r[1], n)
			if len(ticks) < 2 || ticks[0] > r[0] || ticks[len(ticks)-1] < r[1] {
				t.Fatalf("NiceTicks(%g, %g, %d) = %v does not cover the range", r[0], r[1], n, ticks)
			}
			if len(ticks) > 2*n+2 {
				t.Errorf("NiceTicks(%g, %g, %d) gave %d ticks", r[0], r[1], n, len(ticks))
			}
		}
	}
}

func TestLogTicks(t *testing.T) {
	tests := []struct {
		name     string
		min, max float64
		want     []float64
	}{
		{"decades only", 3, 45000, []float64{1, 10, 100, 1000, 1e4, 1e5}},
		{"few decades add 2 and 5", 3, 40, []float64{2, 5, 10, 20, 50}},
		{"narrow adds 3,4,6..9", 0.5, 1.3, []float64{0.5, 0.6, 0.7, 0.8, 0.9, 1, 2}},
		{"single value", 100, 100, []float64{50, 60, 70, 80, 90, 100, 200}},
		{"many decades skip", 1e-6, 1e18, []float64{1e-6, 1e-3, 1, 1e3, 1e6, 1e9, 1e12, 1e15, 1e18}},
		{"zero refused", 0, 10, nil},
		{"negative refused", -1, 10, nil},
		{"NaN refused", math.NaN(), 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chart.LogTicks(tt.min, tt.max)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("LogTicks(%g, %g) = %v, want %v", tt.min, tt.max, got, tt.want)
			}
		})
	}
}

func TestTimeTicks(t *testing.T) {
	base := time.Date(2026, 3, 4, 13, 7, 12, 0, time.UTC) // a Wednesday
	tests := []struct {
		name       string
		span       time.Duration
		n          int
		wantLayout string
		wantFirst  string // formatted with time.RFC3339
		wantStep   time.Duration
	}{
		{"seconds", 40 * time.Second, 6, "15:04:05", "2026-03-04T13:07:20Z", 10 * time.Second},
		{"minutes", 50 * time.Minute, 6, "15:04", "2026-03-04T13:10:00Z", 10 * time.Minute},
		{"hours same day", 9 * time.Hour, 6, "15:04", "2026-03-04T14:00:00Z", 2 * time.Hour},
		{"hours across midnight", 20 * time.Hour, 6, "Jan 2 15:04", "2026-03-04T18:00:00Z", 6 * time.Hour},
		{"days", 5 * 24 * time.Hour, 6, "Jan 2", "2026-03-05T00:00:00Z", 24 * time.Hour},
		{"weeks on Mondays", 40 * 24 * time.Hour, 6, "Jan 2", "2026-03-09T00:00:00Z", 7 * 24 * time.Hour},
		{"months", 300 * 24 * time.Hour, 6, "Jan 2006", "2026-05-01T00:00:00Z", 0},
		{"years", 9 * 365 * 24 * time.Hour, 6, "2006", "2028-01-01T00:00:00Z", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ticks, layout := chart.TimeTicks(base, base.Add(tt.span), tt.n)
			if layout != tt.wantLayout {
				t.Errorf("layout = %q, want %q", layout, tt.wantLayout)
			}
			if len(ticks) < 2 || len(ticks) > tt.n+1 {
				t.Fatalf("got %d ticks %v, want 2..%d", len(ticks), ticks, tt.n+1)
			}
			if got := ticks[0].Format(time.RFC3339); got != tt.wantFirst {
				t.Errorf("first tick = %s, want %s", got, tt.wantFirst)
			}
			for i, tk := range ticks {
				if tk.Before(base) || tk.After(base.Add(tt.span)) {
					t.Errorf("tick %v outside range", tk)
				}
				if i > 0 && tt.wantStep != 0 && tk.Sub(ticks[i-1]) != tt.wantStep {
					t.Errorf("step %v, want %v", tk.Sub(ticks[i-1]), tt.wantStep)
				}
			}
		})
	}
}

func TestTimeTicksEdges(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	t.Run("zero span", func(t *testing.T) {
		ticks, layout := chart.TimeTicks(at, at, 5)
		if len(ticks) != 1 || !ticks[0].Equal(at) || layout != "2006-01-02 15:04" {
			t.Errorf("got %v %q", ticks, layout)
		}
	})
	t.Run("reversed", func(t *testing.T) {
		a, la := chart.TimeTicks(at, at.Add(time.Hour), 5)
		b, lb := chart.TimeTicks(at.Add(time.Hour), at, 5)
		if !reflect.DeepEqual(a, b) || la != lb {
			t.Errorf("reversed range differs: %v %v", a, b)
		}
	})
	t.Run("days across new year keep the year", func(t *testing.T) {
		_, layout := chart.TimeTicks(time.Date(2025, 12, 28, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), 7)
		if layout != "Jan 2 2006" {
			t.Errorf("layout %q", layout)
		}
	})
	t.Run("months start on the first", func(t *testing.T) {
		ticks, _ := chart.TimeTicks(time.Date(2025, 1, 31, 0, 0, 0, 0, time.UTC), time.Date(2025, 7, 15, 0, 0, 0, 0, time.UTC), 8)
		for _, tk := range ticks {
			if tk.Day() != 1 {
				t.Errorf("tick %v not on the 1st", tk)
			}
		}
	})
	t.Run("DST day in a zone stays at midnight", func(t *testing.T) {
		loc, err := time.LoadLocation("Europe/Berlin")
		if err != nil {
			t.Skip("no tzdata:", err)
		}
		ticks, _ := chart.TimeTicks(time.Date(2026, 3, 27, 12, 0, 0, 0, loc), time.Date(2026, 4, 1, 0, 0, 0, 0, loc), 6)
		for _, tk := range ticks {
			if h, m, _ := tk.Clock(); h != 0 || m != 0 {
				t.Errorf("tick %v not at local midnight", tk)
			}
		}
	})
	t.Run("extreme span is bounded", func(t *testing.T) {
		ticks, layout := chart.TimeTicks(time.Time{}, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), 8)
		if len(ticks) < 2 || len(ticks) > 20 || layout != "2006" {
			t.Errorf("got %d ticks, layout %q", len(ticks), layout)
		}
	})
}
