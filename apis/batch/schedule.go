package batch

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// schedule is a parsed cron job schedule: a set of minutes, hours, days of
// the month, months and days of the week, each a bit set, or a fixed
// interval for @every. It is what kube's cron job controller runs on
// (robfig/cron/v3's standard parser); capstan parses it only to validate.
type schedule struct {
	minute, hour, dom, month, dow uint64
	every                         time.Duration
	location                      *time.Location
}

// cronField is the range of one field of a schedule and its names.
type cronField struct {
	min, max uint
	names    map[string]uint
}

var (
	minutes = cronField{0, 59, nil}
	hours   = cronField{0, 23, nil}
	dom     = cronField{1, 31, nil}
	months  = cronField{1, 12, map[string]uint{
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
		"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
	}}
	dow = cronField{0, 6, map[string]uint{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}}
)

// starBit marks a field written as * or ?, as the cron library does.
const starBit = 1 << 63

// parseSchedule parses a standard five-field cron schedule or a descriptor
// (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly,
// @every <duration>), optionally prefixed by TZ=<zone> or CRON_TZ=<zone>.
// Its errors are worded as those of the library kube uses.
func parseSchedule(spec string) (schedule, error) {
	if spec == "" {
		return schedule{}, fmt.Errorf("empty spec string")
	}
	loc := time.Local
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		space, eq := strings.Index(spec, " "), strings.Index(spec, "=")
		if space < 0 {
			// The library panics here and kube reports the recovered panic.
			return schedule{}, fmt.Errorf("invalid schedule format: runtime error: slice bounds out of range [:-1]")
		}
		name := spec[eq+1 : space]
		var err error
		if loc, err = time.LoadLocation(name); err != nil {
			return schedule{}, fmt.Errorf("provided bad location %s: %v", name, err)
		}
		spec = strings.TrimSpace(spec[space:])
	}
	if strings.HasPrefix(spec, "@") {
		return parseDescriptor(spec, loc)
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return schedule{}, fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fields), fields)
	}
	s := schedule{location: loc}
	targets := []*uint64{&s.minute, &s.hour, &s.dom, &s.month, &s.dow}
	for i, f := range []cronField{minutes, hours, dom, months, dow} {
		bits, err := parseField(fields[i], f)
		if err != nil {
			return schedule{}, err
		}
		*targets[i] = bits
	}
	return s, nil
}

func parseDescriptor(spec string, loc *time.Location) (schedule, error) {
	all := func(f cronField) uint64 { return bitRange(f.min, f.max, 1) | starBit }
	s := schedule{minute: 1, hour: 1, dom: all(dom), month: all(months), dow: all(dow), location: loc}
	switch spec {
	case "@yearly", "@annually":
		s.dom, s.month = 1<<dom.min, 1<<months.min
	case "@monthly":
		s.dom = 1 << dom.min
	case "@weekly":
		s.dow = 1 << dow.min
	case "@daily", "@midnight":
	case "@hourly":
		s.hour = all(hours)
	default:
		const every = "@every "
		if !strings.HasPrefix(spec, every) {
			return schedule{}, fmt.Errorf("unrecognized descriptor: %s", spec)
		}
		d, err := time.ParseDuration(spec[len(every):])
		if err != nil {
			return schedule{}, fmt.Errorf("failed to parse duration %s: %s", spec, err)
		}
		// Intervals are whole seconds, at least one.
		return schedule{every: max(d, time.Second).Truncate(time.Second), location: loc}, nil
	}
	return s, nil
}

// parseField parses a comma-separated list of ranges.
func parseField(field string, f cronField) (uint64, error) {
	var bits uint64
	for _, expr := range strings.FieldsFunc(field, func(r rune) bool { return r == ',' }) {
		b, err := parseRange(expr, f)
		if err != nil {
			return 0, err
		}
		bits |= b
	}
	return bits, nil
}

// parseRange parses *, ?, a number or name, or a range low-high, each with
// an optional /step. "n/step" means from n to the end of the field.
func parseRange(expr string, f cronField) (uint64, error) {
	rangeAndStep := strings.Split(expr, "/")
	lowHigh := strings.Split(rangeAndStep[0], "-")
	var start, end uint
	var extra uint64
	var err error
	if lowHigh[0] == "*" || lowHigh[0] == "?" {
		start, end, extra = f.min, f.max, starBit
	} else {
		if start, err = parseValue(lowHigh[0], f.names); err != nil {
			return 0, err
		}
		switch len(lowHigh) {
		case 1:
			end = start
		case 2:
			if end, err = parseValue(lowHigh[1], f.names); err != nil {
				return 0, err
			}
		default:
			return 0, fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	step := uint(1)
	switch len(rangeAndStep) {
	case 1:
	case 2:
		if step, err = parseNumber(rangeAndStep[1]); err != nil {
			return 0, err
		}
		if len(lowHigh) == 1 {
			end = f.max
		}
		if step > 1 {
			extra = 0
		}
	default:
		return 0, fmt.Errorf("too many slashes: %s", expr)
	}
	return checkedRange(expr, f, start, end, step, extra)
}

func checkedRange(expr string, f cronField, start, end, step uint, extra uint64) (uint64, error) {
	switch {
	case start < f.min:
		return 0, fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, f.min, expr)
	case end > f.max:
		return 0, fmt.Errorf("end of range (%d) above maximum (%d): %s", end, f.max, expr)
	case start > end:
		return 0, fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	case step == 0:
		return 0, fmt.Errorf("step of range should be a positive number: %s", expr)
	}
	return bitRange(start, end, step) | extra, nil
}

func parseValue(expr string, names map[string]uint) (uint, error) {
	if n, ok := names[strings.ToLower(expr)]; ok {
		return n, nil
	}
	return parseNumber(expr)
}

func parseNumber(expr string) (uint, error) {
	n, err := strconv.Atoi(expr)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %s", expr, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, expr)
	}
	return uint(n), nil
}

// bitRange sets the bits from low to high, every step.
func bitRange(low, high, step uint) uint64 {
	var bits uint64
	for i := low; i <= high; i += step {
		bits |= 1 << i
	}
	return bits
}
