package bisect

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestDbgAgain(t *testing.T) {
	c := setting{0.10, 0.02, 0, true, true, true}
	k := 0
	for seed := 0; k < 500; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 50))
		w := world{n: 8 + rng.IntN(57), change: c.change, noise: c.noise, broken: map[int]bool{}}
		w.first = 1 + rng.IntN(w.n)
		w.undone = true
		w.first = 1 + rng.IntN(w.n-4)
		w.second = min(w.first+2+rng.IntN(15), w.n-2)
		w.again = min(w.second+2+rng.IntN(15), w.n)
		for i := 1; i < w.n; i++ {
			if rng.Float64() < 0.1 && i != w.first && i != w.second && i != w.again {
				w.broken[i] = true
			}
		}
		if !w.probed(w.first, w.second) || !w.probed(w.second, w.again) {
			continue
		}
		k++
		o := simulate(t, w, 0.05, 5, 30, rng)
		if len(o.named) > 0 && !slices.Equal(o.named, w.truth()) || len(o.episode) > 0 && !slices.Equal(o.episode, w.episode()) {
			fmt.Println(w.n, w.first, w.second, w.again, "named", o.named, o.episode, Probes(w.n, 8))
		}
	}
}
