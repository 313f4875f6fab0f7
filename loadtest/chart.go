package loadtest

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
)

// ChartBar is one server's distribution for one operation.
type ChartBar struct {
	Color   color.RGBA
	Summary Summary
}

// ChartRow is one operation: a label and a bar per server.
type ChartRow struct {
	Label string
	Bars  []ChartBar
}

// ChartLegend names a bar color.
type ChartLegend struct {
	Name  string
	Color color.RGBA
}

// Chart layout, in pixels.
const (
	chartWidth   = 1200
	chartMargin  = 12
	chartLabelW  = 300
	chartBarH    = 12
	chartBarGap  = 3
	chartRowGap  = 14
	chartHeaderH = 70
	chartFooterH = 30
)

var (
	chartInk  = color.RGBA{0x22, 0x22, 0x22, 0xff}
	chartGrid = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
)

// Chart draws each row's latency distributions on a log scale: a solid bar
// to p50, lighter bars to p90 and p99, a line to p99.9 and a tick at max.
func Chart(title string, legend []ChartLegend, rows []ChartRow) *image.RGBA {
	rowH := 0
	for _, r := range rows {
		rowH += len(r.Bars)*(chartBarH+chartBarGap) + chartRowGap
	}
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, chartHeaderH+rowH+chartFooterH))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	drawText(img, chartMargin, chartMargin, title, chartInk)
	x := chartMargin
	for _, l := range legend {
		fillRect(img, x, chartMargin+20, 20, textHeight, l.Color)
		drawText(img, x+26, chartMargin+20, l.Name, chartInk)
		x += 26 + textWidth(l.Name) + 30
	}
	axis := newLogAxis(rows, chartMargin+chartLabelW, chartWidth-chartMargin)
	top, bottom := chartHeaderH, chartHeaderH+rowH
	axis.drawGrid(img, top-4, bottom)
	y := top
	for _, r := range rows {
		h := len(r.Bars)*(chartBarH+chartBarGap) - chartBarGap
		drawText(img, chartMargin, y+(h-textHeight)/2, r.Label, chartInk)
		for _, b := range r.Bars {
			axis.drawBar(img, y, b)
			y += chartBarH + chartBarGap
		}
		y += chartRowGap - chartBarGap
	}
	return img
}

// logAxis maps milliseconds to x on a log scale of whole decades.
type logAxis struct {
	x0, x1          int
	loDec, hiDec    int // log10 of the first and last decade
	pixelsPerDecade float64
}

func newLogAxis(rows []ChartRow, x0, x1 int) logAxis {
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		for _, b := range r.Bars {
			if b.Summary.Count == 0 {
				continue
			}
			for _, v := range []float64{b.Summary.P50Ms, b.Summary.P90Ms, b.Summary.MaxMs} {
				if v > 0 {
					lo = math.Min(lo, v)
				}
			}
			hi = math.Max(hi, b.Summary.MaxMs)
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	a := logAxis{x0: x0, x1: x1, loDec: int(math.Floor(math.Log10(lo))), hiDec: int(math.Ceil(math.Log10(hi)))}
	if a.hiDec <= a.loDec {
		a.hiDec = a.loDec + 1
	}
	a.pixelsPerDecade = float64(x1-x0) / float64(a.hiDec-a.loDec)
	return a
}

func (a logAxis) x(ms float64) int {
	if ms <= 0 {
		return a.x0
	}
	x := a.x0 + int((math.Log10(ms)-float64(a.loDec))*a.pixelsPerDecade)
	return max(a.x0, min(x, a.x1))
}

func (a logAxis) drawGrid(img draw.Image, top, bottom int) {
	for d := a.loDec; d <= a.hiDec; d++ {
		x := a.x(math.Pow10(d))
		fillRect(img, x, top, 1, bottom-top, chartGrid)
		label := decadeLabel(d)
		lx := min(x-textWidth(label)/2, img.Bounds().Dx()-chartMargin-textWidth(label))
		drawText(img, lx, bottom+8, label, chartInk)
	}
}

// decadeLabel names 10^d milliseconds: 0.01MS ... 100MS, 1S, 10S ...
func decadeLabel(d int) string {
	switch {
	case d < 0:
		return fmt.Sprintf("%gMS", math.Pow10(d))
	case d < 3:
		return fmt.Sprintf("%dMS", int(math.Pow10(d)))
	default:
		return fmt.Sprintf("%dS", int(math.Pow10(d-3)))
	}
}

func (a logAxis) drawBar(img draw.Image, y int, b ChartBar) {
	s := b.Summary
	if s.Count == 0 {
		return
	}
	p50, p90, p99 := a.x(s.P50Ms), a.x(s.P90Ms), a.x(s.P99Ms)
	fillRect(img, a.x0, y, p50-a.x0+1, chartBarH, b.Color)
	fillRect(img, p50, y, p90-p50+1, chartBarH, tint(b.Color, 0.55))
	fillRect(img, p90, y, p99-p90+1, chartBarH, tint(b.Color, 0.3))
	fillRect(img, p99, y+chartBarH/2-1, a.x(s.P999Ms)-p99+1, 2, b.Color)
	fillRect(img, a.x(s.MaxMs)-1, y, 2, chartBarH, chartInk)
}

// tint mixes c with white, keeping share of c.
func tint(c color.RGBA, share float64) color.RGBA {
	mix := func(v uint8) uint8 { return uint8(float64(v)*share + 255*(1-share)) }
	return color.RGBA{mix(c.R), mix(c.G), mix(c.B), 0xff}
}

func fillRect(img draw.Image, x, y, w, h int, c color.Color) {
	draw.Draw(img, image.Rect(x, y, x+w, y+h), image.NewUniform(c), image.Point{}, draw.Src)
}

// WritePNG writes img to path.
func WritePNG(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
