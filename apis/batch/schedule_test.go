package batch

import "testing"

func TestParseSchedule(t *testing.T) {
	valid := []string{
		"* * * * *", "0 3 * * *", "*/15 0-6,18-23 1,15 * mon-fri", "0 0 1 jan,JUL ?", "5/10 * * * *",
		"0 12 * * 0-6/2", "@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually",
		"@every 1h30m", "@every 10ms", "TZ=UTC 0 * * * *", "CRON_TZ=Europe/Paris @daily", "0  3   *  * *", "1,,2 * * * *",
	}
	for _, s := range valid {
		if _, err := parseSchedule(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	invalid := []struct{ spec, err string }{
		{"", "empty spec string"},
		{"* * * *", "expected exactly 5 fields, found 4: [* * * *]"},
		{"* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"},
		{"60 * * * *", "end of range (60) above maximum (59): 60"},
		{"* 24 * * *", "end of range (24) above maximum (23): 24"},
		{"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
		{"* * * 13 *", "end of range (13) above maximum (12): 13"},
		{"* * * * 7", "end of range (7) above maximum (6): 7"},
		{"5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"},
		{"1-2-3 * * * *", "too many hyphens: 1-2-3"},
		{"*/2/3 * * * *", "too many slashes: */2/3"},
		{"*/0 * * * *", "step of range should be a positive number: */0"},
		{"x * * * *", `failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax`},
		{"* * * foo *", `failed to parse int from foo: strconv.Atoi: parsing "foo": invalid syntax`},
		{"@often", "unrecognized descriptor: @often"},
		{"@every 1x", `failed to parse duration @every 1x: time: unknown unit "x" in duration "1x"`},
		{"TZ=Mars/Olympus * * * * *", "provided bad location Mars/Olympus: unknown time zone Mars/Olympus"},
		{"TZ=UTC", "invalid schedule format: runtime error: slice bounds out of range [:-1]"},
	}
	for _, tt := range invalid {
		if _, err := parseSchedule(tt.spec); err == nil || err.Error() != tt.err {
			t.Errorf("%q: error %v, want %q", tt.spec, err, tt.err)
		}
	}
}

func TestScheduleBits(t *testing.T) {
	s, err := parseSchedule("*/20 9-17/4 1 * sun")
	if err != nil {
		t.Fatal(err)
	}
	if s.minute != 1|1<<20|1<<40 || s.hour != 1<<9|1<<13|1<<17 || s.dom != 1<<1 || s.month&starBit == 0 || s.dow != 1 {
		t.Errorf("schedule = %+v", s)
	}
	if s, _ := parseSchedule("@every 1500ms"); s.every.String() != "1s" {
		t.Errorf("every = %v, want whole seconds", s.every)
	}
}
