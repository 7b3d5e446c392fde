package faults

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/trainingco/catalogue/builder/buildertest"
	"github.com/trainingco/catalogue/builder/snapshot"
	"github.com/trainingco/catalogue/cmd/internal/cmdtest"
	"github.com/trainingco/catalogue/config"
)

// killSeed is the data set of the kill test: about 1,300 documents, so that a run (with
// -race) lasts about a second and the first publication a few.
var killSeed = []string{"seed", "--courses", "50", "--classes", "1500", "--registrations", "7500", "--seed", "4"}

// killPhase names where a killed run was stopped, judged from what it left in the store.
func killPhase(before, after contents, pointerMoved bool) string {
	switch {
	case pointerMoved:
		return "after the pointer"
	case len(after.manifests) > len(before.manifests):
		return "between manifest and pointer"
	case len(after.objects) > len(before.objects):
		return "while storing objects"
	}
	return "before any write"
}

// TestKilledRunsNeverChangeWhatIsServed kills the real builder run with SIGKILL at random
// moments spread over a whole run (issue 4, guarantee 1). Each round publishes a change
// uninterrupted (which times a run), then makes another change and kills a run of it after
// a delay drawn from the k-th of n equal slices of that time, the slices in random order.
// After each kill the pointer must be unchanged, with the edge still serving the previous
// snapshot's document, or name a complete snapshot that the edge then serves; the next run
// must publish normally. A reader hits the edge throughout and every answer must be a
// published snapshot's own document.
func TestKilledRunsNeverChangeWhatIsServed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		store func(testing.TB) config.Store
		kills int
	}{
		{"s3", buildertest.NewS3Store, 20},
		{"local", buildertest.NewLocalStore, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			killLoop(t, tt.store(t), tt.kills)
		})
	}
}

func killLoop(t *testing.T, st config.Store, kills int) {
	env := cmdtest.NewEnv(t, st)
	env.MustBuilder(t, killSeed...)
	changeData(t, env, 0)
	prev := env.Run(t)
	in := newInspector(t, st)
	published := map[string]*snapshot.Manifest{prev: in.current(t)}
	token := env.Token(t, "faults")
	d := env.StartEdge(t, edgeVars(nil))
	d.WaitSnapshot(t, prev, time.Minute)
	w := watch(d.URL, token, snapshot.CourseRoute(watchedCourse), 25*time.Millisecond)

	phases := map[string]int{}
	var gen, killed, rounds int
	strata := rand.Perm(kills)
	for killed < kills && rounds < 2*kills {
		// An uninterrupted run publishes a change and says how long a run takes.
		gen++
		changeData(t, env, gen)
		r := runBuilder(t, env, 0)
		prev = r.mustPublish(t, "uninterrupted run")
		before := in.contents(t)
		published[prev] = in.complete(t, prev, before.objects)
		d.WaitSnapshot(t, prev, 30*time.Second)
		checkServed(t, d, token, prev, gen)

		// A run of the next change, killed somewhere in its k-th slice of that time.
		gen++
		changeData(t, env, gen)
		k := strata[rounds%kills]
		delay := time.Duration((float64(k) + rand.Float64()) / float64(kills) * float64(r.took))
		rounds++
		kr := runBuilder(t, env, delay)
		after := in.contents(t)
		ptr := in.pointer(t)
		switch {
		case kr.killed:
			killed++
			phases[killPhase(before, after, ptr != prev)]++
		case kr.exit == 0:
			phases["finished before the kill"]++
		default:
			t.Fatalf("round %d: a run that was not killed exited %d\n%s", rounds, kr.exit, kr.stderr)
		}
		if ptr == prev {
			// Nothing was published: the edge still serves the previous snapshot.
			checkServed(t, d, token, prev, gen-1)
			continue
		}
		if !after.manifests[ptr] || before.manifests[ptr] {
			t.Fatalf("round %d (killed after %v): the pointer names %s, not the new snapshot", rounds, delay, ptr)
		}
		published[ptr] = in.complete(t, ptr, after.objects)
		d.WaitSnapshot(t, ptr, 30*time.Second)
		checkServed(t, d, token, ptr, gen)
		prev = ptr
	}

	// After the last kill the next run completes normally.
	gen++
	changeData(t, env, gen)
	last := runBuilder(t, env, 0).mustPublish(t, "run after the last kill")
	published[last] = in.current(t)
	d.WaitSnapshot(t, last, 30*time.Second)
	checkServed(t, d, token, last, gen)
	if out := env.MustBuilder(t, "status"); !strings.Contains(out, "current: "+last+"\n") {
		t.Errorf("builder status after the kills:\n%s\nwant current: %s", out, last)
	}

	sent, failed := w.finish()
	w.check(t, published)
	if killed < kills {
		t.Errorf("only %d of %d rounds killed a running builder (the others finished first)", killed, rounds)
	}
	t.Logf("%s: %d runs killed with SIGKILL in %d rounds; where: %v; %d reads of the edge, %d failed",
		st.URL[:strings.Index(st.URL, ":")], killed, rounds, phases, sent, failed)
}
