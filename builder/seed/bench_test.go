package seed

import (
	"context"
	"testing"

	"github.com/trainingco/catalogue/scripts/testkit"
)

// full is the size the catalogue is benchmarked at.
var full = Options{Courses: 2000, Classes: 100000, Registrations: 1000000, Seed: 1, Today: today, Reset: true}

// BenchmarkSeed loads the full-size catalogue into PostgreSQL:
//
//	go test -run '^$' -bench Seed -benchtime 3x ./builder/seed
func BenchmarkSeed(b *testing.B) {
	conn := testkit.Connect(b, testkit.NewMigratedDatabase(b))
	for b.Loop() {
		s, err := Seed(context.Background(), conn, full)
		if err != nil {
			b.Fatalf("Seed: %v", err)
		}
		b.ReportMetric(float64(s.Registrations), "registrations/op")
	}
}

// BenchmarkGenerate generates the full-size catalogue without a database, to tell the time
// spent in Go from the time spent in PostgreSQL.
func BenchmarkGenerate(b *testing.B) {
	for b.Loop() {
		courses := genCourses(newRand(1, streamCourses), full.Courses)
		lr := newRand(1, streamLocations)
		rooms := genRooms(lr, genLocations(lr, locationCount(full.Courses)))
		classes := genClasses(newRand(1, streamClasses), full.Classes, courses, rooms, today)
		regs := newRegistrations(newRand(1, streamRegistrations), full.Registrations, classes, today)
		for {
			row, _ := regs.row()
			if row == nil {
				break
			}
		}
	}
}
