import { names } from './resources';

describe('names', () => {
  it.each([
    ['strings', ['a', 'b'], ['a', 'b']],
    ['objects', [{ name: 'a' }, { build: 'b' }, { other: 1 }], ['a', 'b']],
    ['an object holding a list', { builds: ['1.0', '1.1'] }, ['1.0', '1.1']],
    ['nothing useful', 42, []],
    ['null', null, []],
  ])('reads %s', (_, answer, want) => {
    expect(names(answer)).toEqual(want);
  });
});
