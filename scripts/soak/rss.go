package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// rssSample is the edge's resident memory at one moment of the run.
type rssSample struct {
	at time.Duration // since the traffic started
	kb int64
}

// rssResult is what sampleRSS returns for one edge.
type rssResult struct {
	samples []rssSample
	err     error
}

// sampleRSS reads the VmRSS of process pid every interval until ctx is done, and returns
// the samples and the error that ended sampling early (the process gone), if any.
func sampleRSS(ctx context.Context, pid int, every time.Duration) ([]rssSample, error) {
	start := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	var samples []rssSample
	for {
		kb, err := vmRSS(pid)
		if err != nil {
			return samples, err
		}
		samples = append(samples, rssSample{at: time.Since(start), kb: kb})
		select {
		case <-ctx.Done():
			return samples, nil
		case <-t.C:
		}
	}
}

// vmRSS returns the VmRSS line of /proc/PID/status, in kB.
func vmRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read the memory of process %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read the memory of process %d: %w", pid, err)
	}
	return 0, fmt.Errorf("read the memory of process %d: no VmRSS in /proc/%d/status", pid, pid)
}

// rssSummary is the edge's memory over the run after the warm-up.
type rssSummary struct {
	startKB, endKB, maxKB int64
	samples               int
	growth                float64 // (end - start) / start
}

// summarise picks the first sample at or after warmup as the start, the last as the end,
// and the largest from the start on.
func summarise(samples []rssSample, warmup time.Duration) (rssSummary, error) {
	var s rssSummary
	for _, x := range samples {
		if x.at < warmup {
			continue
		}
		if s.samples == 0 {
			s.startKB = x.kb
		}
		s.samples++
		s.endKB, s.maxKB = x.kb, max(s.maxKB, x.kb)
	}
	if s.samples < 2 {
		return s, fmt.Errorf("%d memory samples after the %s warm-up; the run is too short to judge", s.samples, warmup)
	}
	s.growth = float64(s.endKB-s.startKB) / float64(s.startKB)
	return s, nil
}
