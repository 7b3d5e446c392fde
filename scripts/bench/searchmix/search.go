package main

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/trainingco/catalogue/edge/search/index"
)

// search is one class search of the mix. Zero values are absent parameters.
type search struct {
	CourseID         int64 // not 0: the per-course search of that course
	Search           string
	Start, End, Date time.Time
	Page             int
	Limit            int // 0: the default
}

// path returns the request path of s on the edge; dates are written MM-DD-YYYY (spec 4.3).
func (s search) path(base string) string {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("search", s.Search)
	set("start", filterDate(s.Start))
	set("end", filterDate(s.End))
	set("date", filterDate(s.Date))
	if s.Page > 1 {
		set("page", strconv.Itoa(s.Page))
	}
	if s.Limit > 0 {
		set("limit", strconv.Itoa(s.Limit))
	}
	p := base + "/public/classes"
	if s.CourseID != 0 {
		p = base + "/public/course/" + strconv.FormatInt(s.CourseID, 10) + "/classes"
	}
	if len(q) == 0 {
		return p
	}
	return p + "?" + q.Encode()
}

func filterDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("01-02-2006")
}

// limit is the page size the edge uses for s (D9: default 25).
func (s search) limit() int {
	if s.Limit > 0 {
		return min(s.Limit, 50)
	}
	return 25
}

// sqlArgs returns the arguments of templates/search.sql for s, in order, as the edge binds
// them (edge/search/search.go queryArgs): $1 today, $2 start, $3 end, $4 date, $5 the
// escaped name fragment, $6 course id, $7 limit, $8 offset; nil is an absent filter
// (NULL). The mix's fragments are letters only, so escaping leaves them as they are. write
// checks the count against the template.
func (s search) sqlArgs(today time.Time) []any {
	args := []any{today, nil, nil, nil, nil, nil, int64(s.limit()), int64((s.Page - 1) * s.limit())}
	for i, d := range []time.Time{s.Start, s.End, s.Date} {
		if !d.IsZero() {
			args[1+i] = d
		}
	}
	if s.Search != "" {
		args[4] = s.Search
	}
	if s.CourseID != 0 {
		args[5] = s.CourseID
	}
	return args
}

// query is s as the edge asks its index (edge/search/index).
func (s search) query(today time.Time) index.Query {
	return index.Query{Search: s.Search, CourseID: s.CourseID, Today: today, Start: s.Start, End: s.End, Date: s.Date,
		Limit: int64(s.limit()), Offset: int64((s.Page - 1) * s.limit())}
}

// argText is an argument as pgbench sends it: text, which the template's casts convert.
func argText(v any) string {
	switch v := v.(type) {
	case time.Time:
		return v.Format(time.DateOnly)
	case []int64:
		s := make([]string, len(v))
		for i, n := range v {
			s[i] = strconv.FormatInt(n, 10)
		}
		return "{" + strings.Join(s, ",") + "}"
	}
	return fmt.Sprint(v)
}

var (
	paramRe   = regexp.MustCompile(`\$([0-9]+)`)
	commentRe = regexp.MustCompile(`(?m)^\s*--.*$`)
)

// scriptBody returns the template without its comment lines (pgbench would read a
// ":name" or "$n" in a comment as a parameter) and ending in a semicolon, and the number of
// parameters it takes.
func scriptBody(sql string) (string, int, error) {
	body := strings.TrimSpace(commentRe.ReplaceAllString(sql, ""))
	if body == "" {
		return "", 0, fmt.Errorf("the template is empty")
	}
	if strings.Contains(body, ";") {
		return "", 0, fmt.Errorf("the template holds more than one statement")
	}
	n := 0
	for _, m := range paramRe.FindAllStringSubmatch(body, -1) {
		k, _ := strconv.Atoi(m[1])
		n = max(n, k)
	}
	return body + ";\n", n, nil
}

// pgbenchScript returns body with each $n replaced by a pgbench variable prefix+n, or by
// NULL when the argument is absent, and the -D definitions of the variables. With inline,
// each $n is replaced by its value as an SQL literal instead, and there are no variables.
func pgbenchScript(body, prefix string, args []any, inline bool) (string, []string) {
	var defs []string
	for i, a := range args {
		if a != nil && !inline {
			defs = append(defs, fmt.Sprintf("%s%d=%s", prefix, i+1, argText(a)))
		}
	}
	script := paramRe.ReplaceAllStringFunc(body, func(m string) string {
		k, _ := strconv.Atoi(m[1:])
		switch {
		case args[k-1] == nil:
			return "NULL"
		case inline:
			return "'" + strings.ReplaceAll(argText(args[k-1]), "'", "''") + "'"
		}
		return ":" + prefix + strconv.Itoa(k)
	})
	return script, defs
}
