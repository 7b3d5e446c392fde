package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// dataset is the whole catalogue of the tests. Dates are written @+N / @-N: today plus or
// minus N days, in the time zone the test sets (see newClock). Every expected body in the
// tests follows from these rows and the specification.
//
// Courses (9 public, 1 not) and why each is there:
//
//	10 Zoology          B&M      most registrations (5): first in popular; 102 is earlier but not public
//	11 art history      Blended  only a past class: upcoming_class null; lower case for D14/D17 order
//	12 Biology_Lab      B&M      "_" for D11; room-less upcoming class 120; 121 not public, 122 past
//	13 Algebra 100%     Online   "%" for D11; past class 130 still searched (D4); 131 full but open (D5)
//	14 biology basics   Blended  class 140 starts today (D2); 141 uncapped with a down payment
//	15 chemistry        Online   uncapped, free, same start as 100 and 101 (D12 by id)
//	16 Chemistry        B&M      no class: upcoming_class null; same name as 17 (D14 by id)
//	17 Chemistry        Blended  only a class that is not public: upcoming_class null
//	18 Yoga             Blended  51 classes 1000-1050 from @+100 on, for limit and page (D9, D10)
//	20 Secret Course    Online   not public: absent everywhere although it has 10 registrations
//
// Popularity (D17), all registrations of all classes: Secret Course 10 (not public),
// Zoology 5, then a tie at 3 broken by name case-insensitively: Algebra 100%, art history,
// Biology_Lab. So popular is Zoology, Algebra 100%, art history: by id, or comparing names
// case-sensitively ("B" < "a"), it would not be.
const dataset = `
INSERT INTO courses (id, name, type, description, is_public) VALUES
    (10, 'Zoology',        'Brick and Mortar', '<p>Animals &amp; <b>habitats</b></p>', true),
    (11, 'art history',    'Blended',          'Paintings.', true),
    (12, 'Biology_Lab',    'Brick and Mortar', 'Cells.', true),
    (13, 'Algebra 100%',   'Online',           'Numbers.', true),
    (14, 'biology basics', 'Blended',          NULL, true),
    (15, 'chemistry',      'Online',           'Reactions.', true),
    (16, 'Chemistry',      'Brick and Mortar', 'Labs.', true),
    (17, 'Chemistry',      'Blended',          'Mixed.', true),
    (18, 'Yoga',           'Blended',          'Stretching.', true),
    (20, 'Secret Course',  'Online',           'Hidden.', false);

INSERT INTO locations (id, name, city, state, zip, country) VALUES
    (1, 'Downtown Center', 'Springfield', 'IL', '62701', 'US'),
    (2, 'Harbor Campus',   'Portland',    'OR', '97201', 'US');

INSERT INTO rooms (id, location_id, name) VALUES
    (1, 1, 'Room 101'),
    (2, 2, 'Lab B');

INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public) VALUES
    (100, 10, 1,    '@+10',  '@+12', 'Mon-Wed 9am-5pm', 500, 10,   30000, true),
    (101, 10, 2,    '@+10',  '@+11', NULL,              450, 5,    NULL,  true),
    (102, 10, 1,    '@+5',   '@+6',  NULL,              400, 10,   NULL,  false),
    (103, 10, 2,    '@+15',  '@+16', NULL,              600, 1,    NULL,  true),
    (110, 11, 1,    '@-30',  '@-28', 'Weekends',        700, 3,    NULL,  true),
    (120, 12, NULL, '@+20',  '@+21', NULL,              300, NULL, NULL,  true),
    (121, 12, 2,    '@+3',   '@+4',  NULL,              300, 10,   NULL,  false),
    (122, 12, 2,    '@-10',  '@-9',  NULL,              300, 10,   NULL,  true),
    (130, 13, 1,    '@-60',  '@-1',  'Self-paced',      100, 20,   NULL,  true),
    (131, 13, NULL, '@+1',   '@+30', NULL,              120, 1,    2500,  true),
    (140, 14, 2,    '@+0',   '@+2',  NULL,              200, 8,    NULL,  true),
    (141, 14, 1,    '@+40',  '@+41', NULL,              250, NULL, 5000,  true),
    (150, 15, NULL, '@+10',  '@+10', NULL,              0,   NULL, NULL,  true),
    (170, 17, 1,    '@+2',   '@+2',  NULL,              90,  10,   NULL,  false),
    (200, 20, NULL, '@+1',   '@+2',  NULL,              10,  NULL, NULL,  true);

-- Yoga: 51 one-day classes, ids 1000-1050, on @+100 ... @+150.
INSERT INTO classes (id, course_id, room_id, start_date, end_date, schedule, cost, seat_limit, down_payment, is_public)
SELECT 1000 + i, 18, 1, DATE '@+100' + i, DATE '@+100' + i, NULL, 50, NULL, NULL, true
FROM generate_series(0, 50) AS i;

INSERT INTO registrations (id, class_id, student_id) VALUES
    (1, 100, 1), (2, 100, 2), (3, 100, 3), (4, 100, 4),
    (5, 103, 5),
    (6, 110, 6), (7, 110, 7), (8, 110, 8),
    (9, 120, 9), (10, 121, 10), (11, 122, 11),
    (12, 130, 12), (13, 130, 13), (14, 131, 14),
    (15, 141, 15);
INSERT INTO registrations (id, class_id, student_id)
SELECT i, 200, i FROM generate_series(16, 25) AS i;
`

// clock is "today" of a test run and the time zone that defines it (D1).
type clock struct {
	zone  string    // IANA name handed to the binaries as CATALOGUE_TIMEZONE
	today time.Time // midnight UTC of today's date in zone
}

// newClock picks a fixed-offset zone where it is now between noon and 1 pm, so that "today"
// cannot change while the tests run (the binaries read the real clock). When the machine has
// no zoneinfo it falls back to UTC, where a run across midnight could fail.
func newClock(now time.Time) clock {
	h := now.UTC().Hour() - 12 // Etc/GMT+h is h hours behind UTC
	zone := "Etc/GMT"
	switch {
	case h > 0:
		zone += "+" + strconv.Itoa(h)
	case h < 0:
		zone += strconv.Itoa(h)
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		zone, loc = "UTC", time.UTC
	}
	y, m, d := now.In(loc).Date()
	return clock{zone: zone, today: time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

// day returns today plus n days.
func (c clock) day(n int) time.Time { return c.today.AddDate(0, 0, n) }

// ymd formats today plus n days as response dates are written: YYYY-MM-DD.
func (c clock) ymd(n int) string { return c.day(n).Format(time.DateOnly) }

// mdy formats today plus n days as filter dates are written: MM-DD-YYYY.
func (c clock) mdy(n int) string { return c.day(n).Format("01-02-2006") }

// mdyShort is mdy without leading zeros in month and day (D7 accepts both).
func (c clock) mdyShort(n int) string {
	d := c.day(n)
	return fmt.Sprintf("%d-%d-%d", d.Month(), d.Day(), d.Year())
}

// dayRef matches the @+N / @-N day references of the dataset and the expected bodies.
var dayRef = regexp.MustCompile(`@([+-]\d+)`)

// expand replaces every @+N / @-N in s by the date it names, YYYY-MM-DD.
func (c clock) expand(s string) string {
	return dayRef.ReplaceAllStringFunc(s, func(ref string) string {
		n, _ := strconv.Atoi(ref[1:]) // the pattern guarantees a signed integer
		return c.ymd(n)
	})
}
