package tree

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// simProgram is a synthetic program for statistics in simulation: stacks
// over a few dozen functions with heavy-tailed mean values per run.
type simProgram struct {
	stacks [][]string
	mean   []float64
}

func newSimProgram(r *rand.Rand, nStacks int) *simProgram {
	p := &simProgram{}
	seen := map[string]bool{}
	for len(p.stacks) < nStacks {
		stack := []string{"main"}
		for range 1 + r.IntN(6) {
			stack = append(stack, fmt.Sprint("f", r.IntN(30)))
		}
		if key := strings.Join(stack, ";"); !seen[key] {
			seen[key] = true
			p.stacks = append(p.stacks, stack)
			p.mean = append(p.mean, 1e5/math.Pow(float64(len(p.stacks)), 1.2))
		}
	}
	return p
}

// simRun is one run's sample counts: each stack's mean times a factor of
// the whole run and its own factor (both noise sd wide), drawn Poisson.
func (p *simProgram) simRun(r *rand.Rand, noise float64, change func(stack []string) float64) []int64 {
	run := 1 + noise*r.NormFloat64()
	out := make([]int64, len(p.stacks))
	for i, s := range p.stacks {
		lambda := p.mean[i] * change(s) * run * (1 + noise*r.NormFloat64())
		out[i] = poisson(r, max(lambda, 0))
	}
	return out
}

func poisson(r *rand.Rand, lambda float64) int64 {
	if lambda > 50 {
		return int64(math.Max(0, math.Round(lambda+math.Sqrt(lambda)*r.NormFloat64())))
	}
	k, p, l := int64(0), r.Float64(), math.Exp(-lambda)
	for p > l {
		k++
		p *= r.Float64()
	}
	return k
}

func unchanged([]string) float64 { return 1 }

// simDiff fills a Builder with runs runs a side of p, head changed by
// change.
func simDiff(r *rand.Rand, p *simProgram, runs int, noise float64, change func([]string) float64) *Builder {
	return simDiffSides(r, p, runs, noise, unchanged, change)
}

// simDiffSides is simDiff with base changed too (a stack only head has
// is a base factor of 0).
func simDiffSides(r *rand.Rand, p *simProgram, runs int, noise float64, base, head func([]string) float64) *Builder {
	return simDiffDrawn(p, runs, base, head, func(change func([]string) float64) []int64 { return p.simRun(r, noise, change) })
}

// simDiffDrawn fills a Builder with runs runs a side of p, each run's
// counts drawn by draw with that side's change.
func simDiffDrawn(p *simProgram, runs int, base, head func([]string) float64, draw func(change func([]string) float64) []int64) *Builder {
	b := NewBuilder(NewFrames())
	ids := make([]StackID, len(p.stacks))
	for i, s := range p.stacks {
		var frames []uint32
		for _, name := range s {
			frames = append(frames, b.frames.Intern(name, ""))
		}
		ids[i] = b.Stack(frames)
	}
	for _, side := range []Side{Base, Head} {
		b.SetRuns(side, runs)
		ch := base
		if side == Head {
			ch = head
		}
		for run := range runs {
			for i, v := range draw(ch) {
				if v > 0 {
					b.AddRun(side, run, ids[i], v, uint64(i))
				}
			}
		}
	}
	return b
}

var statViews = []Options{{}, {Inverted: true}, {CollapseSystem: true}, {Inverted: true, CollapseSystem: true}}

// isSimSystem makes frames f0-f9 system frames.
func isSimSystem(b *Builder) func(uint32) bool {
	return func(f uint32) bool {
		name := b.frames.Name(f)
		return len(name) == 2 && name[0] == 'f'
	}
}

func significantNodes(tr *Tree) []string {
	var out []string
	for i, s := range tr.Stats {
		if s.Significant {
			out = append(out, fmt.Sprintf("%s (q %.3g, delta %.3g)", tr.Label(i), s.QValue, tr.Delta(i)))
		}
	}
	return out
}
