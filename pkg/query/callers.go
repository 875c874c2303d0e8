package query

import (
	"cmp"
	"math"
	"slices"

	"github.com/flamediff/flamediff/pkg/sysframes"
	"github.com/flamediff/flamediff/pkg/tree"
)

// Neighbour is a caller or a callee of a function: the function's total
// through that caller, or the callee's total under the function, per run.
type Neighbour struct {
	Function   string
	Base, Head float64
}

// Change is head minus base.
func (n Neighbour) Change() float64 { return n.Head - n.Base }

// Neighbours are a function's total and its callers and callees, each
// list the largest change first.
type Neighbours struct {
	Base, Head       float64
	Callers, Callees []Neighbour
}

// CallersCallees reads function's callers and callees in the tree query
// m filled in b from the sandwich's two trees (tree.Sandwich): on the
// stacks, before any node is merged, each stack cut at the function's
// root-most frame, so that under recursion a call path counts once and
// the function's total is the one Functions gives. A function no stack
// goes through is ErrNoFunction.
func CallersCallees(b *tree.Builder, m Model, rules *sysframes.Rules, function string) (Neighbours, error) {
	var out Neighbours
	o := TreeOptions(b, m, rules)
	o.MaxNodes, o.Focus = MaxMaxNodes, nil
	m.Sandwich = function
	for _, part := range m.sandwichParts() {
		o.Sandwich = part
		t, err := b.Build(o)
		if err != nil {
			return out, err
		}
		at := map[string]int{} // index in list by title
		var list []Neighbour
		// The function's nodes are the root's children (one per module
		// of that name, for a plain name); their children are the callers
		// or the callees.
		for i := 1; i < len(t.Nodes); i += int(t.Nodes[i].Size) {
			n := t.Nodes[i]
			if part.Callers {
				out.Base += n.BaseTotal
				out.Head += n.HeadTotal
			}
			for c := i + 1; c < i+int(n.Size); c += int(t.Nodes[c].Size) {
				name := t.Title(c)
				k, seen := at[name]
				if !seen {
					k, at[name] = len(list), len(list)
					list = append(list, Neighbour{Function: name})
				}
				list[k].Base += t.Nodes[c].BaseTotal
				list[k].Head += t.Nodes[c].HeadTotal
			}
		}
		slices.SortFunc(list, func(x, y Neighbour) int {
			return cmp.Or(cmp.Compare(math.Abs(y.Change()), math.Abs(x.Change())), cmp.Compare(x.Function, y.Function))
		})
		if part.Callers {
			out.Callers = list
		} else {
			out.Callees = list
		}
	}
	return out, nil
}
