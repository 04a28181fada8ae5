package chart

import (
	"context"
	"io"
)

// PhoneWidth is the viewBox width of a chart drawn for a phone: at a
// 390 px screen, less its margins, a user unit is about a CSS pixel, so
// labels keep their size and the value axis stays in view (issue 38: a
// wide chart either shrank its text to ~5 px or, scrolled sideways, hid
// its axis).
const PhoneWidth = 360

// Responsive is a chart drawn twice, for a screen and for a phone: the
// page's CSS shows the one that fits (the phone's under 720 px). Each
// draws its own axes and ticks for its width from the same data.
type Responsive struct {
	Wide, Phone interface {
		Render(ctx context.Context, w io.Writer) error
	}
}

// Render writes both drawings, each in its own box; it satisfies
// templ.Component.
func (r Responsive) Render(ctx context.Context, w io.Writer) error {
	if _, err := io.WriteString(w, `<div class="rw-wide">`); err != nil {
		return err
	}
	if err := r.Wide.Render(ctx, w); err != nil {
		return err
	}
	if _, err := io.WriteString(w, `</div><div class="rw-phone">`); err != nil {
		return err
	}
	if err := r.Phone.Render(ctx, w); err != nil {
		return err
	}
	_, err := io.WriteString(w, `</div>`)
	return err
}

// phoneFrame is f for a phone: narrow, a little shorter, its ids apart.
func phoneFrame(f Frame, height float64) Frame {
	f.Width = PhoneWidth
	if height > 0 {
		f.Height = height
	}
	if f.ID != "" {
		f.ID += "-phone"
	}
	return f
}

// Responsive is c for a screen and for a phone; a prerendered c stays
// prerendered in both, each drawn once (Prerendered drew the phone's too).
func (c TimeScatter) Responsive() Responsive {
	p := c.phoneChart()
	if c.svg != nil {
		p.svg, p.phone = c.phone, nil
	}
	return Responsive{Wide: c, Phone: p}
}

// phoneChart is c framed for a phone, not drawn.
func (c TimeScatter) phoneChart() TimeScatter {
	p := c
	p.svg, p.phone = nil, nil
	p.Frame = phoneFrame(c.Frame, 300)
	return p
}

// Responsive is c for a screen and for a phone.
func (c Timeline) Responsive() Responsive {
	p := c
	p.Frame = phoneFrame(c.Frame, 0)
	return Responsive{Wide: c, Phone: p}
}

// Responsive is c for a screen and for a phone.
func (c Line) Responsive() Responsive {
	p := c
	p.Frame = phoneFrame(c.Frame, 260)
	return Responsive{Wide: c, Phone: p}
}

// Responsive is c for a screen and for a phone; the phone's is taller, its
// boxes narrower.
func (c BoxPlot) Responsive() Responsive {
	p := c
	p.Frame = phoneFrame(c.Frame, 380)
	return Responsive{Wide: c, Phone: p}
}
