// Command versions_go times github.com/Masterminds/semver/v3 (the library Helm uses) on the
// mix that bench/versions.py writes: the same constraint and version strings, in the same
// order. It prints one JSON object of rates (best of the rounds) for bench/versions.py.
//
//	go run . MIX.json
//
// MIX.json: {"constraints": [...], "versions": [...], "pairs": [[ci, vi], ...], "rounds": 3}
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/Masterminds/semver/v3"
)

type mix struct {
	Constraints []string `json:"constraints"`
	Versions    []string `json:"versions"`
	Pairs       [][2]int `json:"pairs"`
	Rounds      int      `json:"rounds"`
}

var sink int // keeps the compiler from dropping the work

func best(rounds int, fn func() int) float64 {
	fastest := time.Duration(1<<63 - 1)
	for r := 0; r < rounds; r++ {
		start := time.Now()
		sink += fn()
		if took := time.Since(start); took < fastest {
			fastest = took
		}
	}
	return fastest.Seconds()
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: versions_go MIX.json")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var m mix
	if err := json.Unmarshal(data, &m); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if m.Rounds < 1 {
		m.Rounds = 3
	}
	cs := make([]string, len(m.Pairs))
	vs := make([]string, len(m.Pairs))
	for i, p := range m.Pairs {
		cs[i], vs[i] = m.Constraints[p[0]], m.Versions[p[1]]
	}
	// parsed once, as a caller that keeps them would
	pc := map[string]*semver.Constraints{}
	pv := map[string]*semver.Version{}
	badC, badV := 0, 0
	for _, c := range m.Constraints {
		if parsed, err := semver.NewConstraint(c); err == nil {
			pc[c] = parsed
		} else {
			badC++
		}
	}
	for _, v := range m.Versions {
		if parsed, err := semver.NewVersion(v); err == nil {
			pv[v] = parsed
		} else {
			badV++
		}
	}
	n := float64(len(m.Pairs))
	parseVersions := best(m.Rounds, func() int {
		ok := 0
		for _, v := range vs {
			if _, err := semver.NewVersion(v); err == nil {
				ok++
			}
		}
		return ok
	})
	parseConstraints := best(m.Rounds, func() int {
		ok := 0
		for _, c := range cs {
			if _, err := semver.NewConstraint(c); err == nil {
				ok++
			}
		}
		return ok
	})
	matched := 0
	warm := best(m.Rounds, func() int {
		matched = 0
		for i := range cs {
			c, v := pc[cs[i]], pv[vs[i]]
			if c != nil && v != nil && c.Check(v) {
				matched++
			}
		}
		return matched
	})
	cold := best(m.Rounds, func() int {
		ok := 0
		for i := range cs {
			c, errC := semver.NewConstraint(cs[i])
			v, errV := semver.NewVersion(vs[i])
			if errC == nil && errV == nil && c.Check(v) {
				ok++
			}
		}
		return ok
	})
	out := map[string]interface{}{
		"go":                   runtime.Version(),
		"pairs":                len(m.Pairs),
		"matched":              matched,
		"unparsed_constraints": badC,
		"unparsed_versions":    badV,
		"version_parses":       n / parseVersions,
		"constraint_parses":    n / parseConstraints,
		"warm_checks":          n / warm,
		"cold_checks":          n / cold,
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
