import { flameFrame } from '../../testing/frames';
import { aroundOf, aroundPatch, cleanAround, sameAround, sandwichOf } from './around';

describe('around', () => {
  it('drops empty keys and an unknown only', () => {
    expect(cleanAround({ keep: '', drop: 'x', only: 'old' as never, sandwich: 'F' })).toEqual({
      drop: 'x',
      sandwich: 'F',
    });
  });

  it('compares asks by their non-empty keys', () => {
    expect(sameAround({ keep: '' }, {})).toBe(true);
    expect(sameAround({ keep: 'a' }, { keep: 'b' })).toBe(false);
    expect(sameAround({ only: 'new' }, {})).toBe(false);
  });

  it('reads an ask from a query model and patches every key', () => {
    const a = aroundOf({ keep: 'pricing', only: 'removed', hideFrames: '', maxNodes: 5 });
    expect(a).toEqual({ keep: 'pricing', only: 'removed' });
    // The patch clears what the query asked besides.
    expect(aroundPatch(a)).toEqual({
      sandwich: undefined,
      keep: 'pricing',
      drop: undefined,
      hideFrames: undefined,
      showFrom: undefined,
      only: 'removed',
    });
  });

  it('splits a sandwich answer into callers and callees', () => {
    const rows: Array<[number, string, number, number]> = [
      [0, 'total', 10, 0],
      [1, 'F', 4, 1],
    ];
    const callers = flameFrame(rows, { custom: { sandwich: 'callers', function: 'F' } });
    const callees = flameFrame(rows, { custom: { sandwich: 'callees', function: 'F' } });
    expect(sandwichOf([callers, callees])).toEqual({ fn: 'F', callers: [callers], callees: [callees] });
    // A whole tree, or only one part, is no sandwich.
    expect(sandwichOf([flameFrame(rows)])).toBeUndefined();
    expect(sandwichOf([callers])).toBeUndefined();
  });
});
