import { queryTypes } from '../datasource/queryTypes';
import { defaultQuery, FlamediffQuery } from '../datasource/types';
import { PageState, decodeState, encodeState } from './urlState';

const query: FlamediffQuery = {
  ...(defaultQuery as FlamediffQuery),
  refId: 'A',
  queryType: 'diff',
  app: 'checkout-service',
  head: { builds: ['1.7.0'], runs: ['r1', 'r 2'] },
  base: { builds: ['1.6.0', '1.5.0'], runs: [] },
  builds: [],
  maxNodes: 5000,
  alpha: 0.01,
};

describe('the page state in the URL fragment', () => {
  it('reopens the same query, view and palette', () => {
    const s: PageState = {
      query,
      view: {
        mode: 'runs',
        layout: 'split',
        side: 'base',
        inverted: true,
        collapsed: true,
        normalize: 'relative',
        significantOnly: false,
        row: 'checkout/pricing.ApplyDiscounts',
        // Labels may hold any character the URL uses itself.
        zoom: ['net/http.(*conn).serve', 'a&b=c#d', 'std::vector<int>::push_back', 'ü ß'],
        drill: ['main'],
        culprit: ['main', 'checkout/pricing.ApplyDiscounts', 'regexp.MustCompile'],
      },
      palette: 'colorBlind',
    };
    const h = encodeState(s);
    expect(h).toContain('app=checkout-service');
    expect(h).toContain('q.alpha=0.01');
    expect(decodeState(`#${h}`)).toEqual(s);
  });

  it.each(queryTypes)('reopens a %s query from its link', (queryType) => {
    const s: PageState = { query: { ...query, queryType }, view: {} as PageState['view'] };
    expect(decodeState(encodeState(s)).query?.queryType).toBe(queryType);
  });

  it('leaves defaults out, so that a plain view gives an empty fragment', () => {
    expect(
      encodeState({ view: { layout: 'graph', side: 'head', inverted: false, collapsed: false, significantOnly: true } })
    ).toBe('');
    expect(decodeState('')).toEqual({ view: {} });
  });

  it('keeps a search apart from a chosen row', () => {
    const s = decodeState(encodeState({ view: { search: 'pricing' } }));
    expect(s.view).toEqual({ search: 'pricing' });
  });

  it('reopens the sandwich function, the filters and only', () => {
    const view = {
      sandwich: 'checkout/pricing.ApplyDiscounts',
      keep: '^checkout/(cart|pricing)\\.',
      drop: 'runtime\\.gc',
      hideFrames: 'a&b=c#d',
      showFrom: 'main\\.main',
      only: 'new' as const,
    };
    const h = encodeState({ view });
    expect(new URLSearchParams(h).get('keep')).toBe(view.keep);
    expect(decodeState(`#${h}`).view).toEqual(view);
    // Empty filters and an unknown only are left out.
    expect(decodeState('#keep=&only=old&sandwich=F').view).toEqual({ sandwich: 'F' });
  });

  it('ignores what it does not know instead of failing', () => {
    const s = decodeState(
      '#side=left&layout=table&inverted=yes&norm=x&palette=pink&mode=3d&app=a&type=nope&q.maxNodes={bad'
    );
    expect(s).toEqual({ view: {} });
    const q = decodeState('#app=a&type=diff&q.maxNodes={bad&q.refId="Z"').query!;
    expect(q.maxNodes).toBe(defaultQuery.maxNodes);
    expect(q.refId).toBe('A');
  });
});

describe('decodeState on arbitrary fragments', () => {
  // A deterministic generator (mulberry32), so a failure repeats.
  function rng(seed: number) {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const pieces = [
    'app',
    'type',
    'diff',
    'head',
    'zoom',
    'culprit',
    'row',
    'q.maxNodes',
    'q.focus',
    'norm',
    'sig',
    '=',
    '&',
    '#',
    '%',
    '%2',
    '%ZZ',
    '1',
    '0',
    '[',
    ']',
    '{',
    '"',
    'ü',
    '\u0000',
    'relative',
    'palette',
    'colorBlind',
    'sandwich',
    'keep',
    'only',
    'new',
    ' ',
    '+',
  ];

  it('never throws, and what it reads encodes to a fragment that reads the same', () => {
    const next = rng(27);
    for (let n = 0; n < 3000; n++) {
      const len = Math.floor(next() * 12);
      const fragment = Array.from({ length: len }, () => pieces[Math.floor(next() * pieces.length)]).join('');
      const s = decodeState(fragment);
      expect(decodeState(encodeState(s))).toEqual(s);
    }
  });
});
