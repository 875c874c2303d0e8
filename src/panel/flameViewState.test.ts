import { FlameViewAction, FlameViewState, chosenFor, initialState, panelView, reduce } from './flameViewState';

const run = (s: FlameViewState, ...actions: FlameViewAction[]) => actions.reduce(reduce, s);
const fresh = () => initialState({}, 'head');

describe('the flame view state', () => {
  it('opens on a host view, the panel defaults for what it leaves out', () => {
    expect(fresh()).toMatchObject({
      side: 'head',
      inverted: false,
      collapsed: false,
      text: '',
      exact: false,
      significantOnly: true,
      zoomed: -1,
    });
    expect(fresh().focus).toBeUndefined();
    const s = initialState({ side: 'base', inverted: true, row: 'parse', culprit: ['main', 'parse'] }, 'head');
    expect(s).toMatchObject({ side: 'base', inverted: true, text: 'parse', exact: true, picked: ['main', 'parse'] });
    expect(initialState({ search: 'pars' }, 'head')).toMatchObject({ text: 'pars', exact: false });
  });

  it('searches: typing drops the chosen culprit; a table row is an exact search zoomed onto', () => {
    let s = run(fresh(), { type: 'culprit', path: ['main', 'c'], node: 4 });
    s = run(s, { type: 'search', text: 'pa' });
    expect(s).toMatchObject({ text: 'pa', exact: false, picked: undefined });
    s = run(s, { type: 'row', label: 'parse', node: 7 });
    expect(s).toMatchObject({ text: 'parse', exact: true, focus: { node: 7, seq: 2 } });
    // A function the drawn tree lacks: chosen, the zoom left as it was.
    expect(run(s, { type: 'row', label: 'gone', node: -1 }).focus).toBe(s.focus);
  });

  it('zooms with a new request each time, even onto the same node', () => {
    const s = run(fresh(), { type: 'zoom', node: 3 }, { type: 'zoom', node: 3 });
    expect(s.focus).toEqual({ node: 3, seq: 2 });
    expect(s.zoomed).toBe(-1);
    expect(run(s, { type: 'zoomed', node: 3 }).zoomed).toBe(3);
    // A node chosen in the call tree (or a split's graph) is the zoomed node at once.
    const t = run(s, { type: 'select', node: 5 });
    expect(t).toMatchObject({ zoomed: 5, focus: { node: 5, seq: 3 } });
    expect(run(t, { type: 'zoomed', node: 5 })).toBe(t);
  });

  it('opens on the layout of the host view, else the panel option, and keeps a change', () => {
    expect(fresh().layout).toBe('graph');
    expect(initialState({}, 'head', 'split').layout).toBe('split');
    expect(initialState({ layout: 'tree' }, 'head', 'split').layout).toBe('tree');
    const s = run(fresh(), { type: 'layout', layout: 'both' });
    expect(panelView(s, { norm: 'absolute', own: 'absolute' }).layout).toBe('both');
    expect(run(s, { type: 'layout', layout: 'both' })).toBe(s);
  });

  it('chooses a culprit: zooms onto its node, resets at the root, only highlights one pruned away', () => {
    const searched = run(fresh(), { type: 'row', label: 'x', node: 2 });
    const at = run(searched, { type: 'culprit', path: ['main', 'c'], node: 5 });
    expect(at).toMatchObject({ text: '', exact: false, picked: ['main', 'c'], focus: { node: 5, seq: 2 } });
    const root = run(searched, { type: 'culprit', path: [], node: 0 });
    expect(root).toMatchObject({ picked: undefined, resetSeq: 1, focus: searched.focus });
    const pruned = run(searched, { type: 'culprit', path: ['main', 'gone'], node: -1 });
    expect(pruned).toMatchObject({ picked: ['main', 'gone'], resetSeq: 0, focus: searched.focus });
  });

  it('resets the zoom and the search, keeping whether the search is exact', () => {
    const s = run(fresh(), { type: 'row', label: 'parse', node: 1 }, { type: 'reset' });
    expect(s).toMatchObject({ text: '', exact: true, picked: undefined, resetSeq: 1 });
  });

  it('is the same state after an action that changes nothing (no render, as for a useState set to its value)', () => {
    const s = run(fresh(), { type: 'zoomed', node: 3 });
    expect(run(s, { type: 'zoomed', node: 3 })).toBe(s);
    expect(run(s, { type: 'side', side: 'head' }, { type: 'inverted', inverted: false }, { type: 'menu' })).toBe(s);
    expect(run(s, { type: 'zoomed', node: -1 })).not.toBe(s);
  });

  it('renders nothing new for a pointer moving outside the nodes', () => {
    const out = run(fresh(), { type: 'hover', node: -1, x: 5, y: 5 });
    expect(run(out, { type: 'hover', node: -1, x: 9, y: 9 })).toBe(out);
    const on = run(out, { type: 'hover', node: 2, x: 9, y: 9 });
    expect(on.hover).toEqual({ node: 2, x: 9, y: 9 });
    expect(run(on, { type: 'hover', node: -1, x: 1, y: 1 }).hover.node).toBe(-1);
  });

  it('holds a normalisation and a drill-down for the frames they were chosen on only', () => {
    const frames = {};
    const next = {};
    let s = run(fresh(), { type: 'zoom', node: 4 }, { type: 'normalize', of: frames, norm: 'relative' });
    expect(s.focus).toBeUndefined(); // a zoom names a node of the frames it was made on
    expect(chosenFor(s, frames, 'absolute')).toEqual({ of: frames, norm: 'relative' });
    expect(chosenFor(s, next, 'absolute')).toEqual({ norm: 'absolute', drill: undefined });

    s = run(s, { type: 'drill', of: frames, norm: 'relative', path: ['main', 'parse'] });
    expect(chosenFor(s, frames, 'absolute').drill).toEqual({ path: ['main', 'parse'], loading: true });
    const answer = { path: ['main', 'parse'], series: [] };
    s = run(s, { type: 'drilled', of: frames, norm: 'relative', drill: answer, node: 2 });
    expect(chosenFor(s, frames, 'absolute')).toMatchObject({ norm: 'relative', drill: answer });
    expect(s.focus).toEqual({ node: 2, seq: 1 });
    // Back to the panel's frames.
    expect(chosenFor(run(s, { type: 'drill', of: frames, norm: 'relative', path: [] }), frames, 'absolute').drill).toBe(
      undefined
    );
  });

  it('never changes the state it is given', () => {
    const s = Object.freeze(run(fresh(), { type: 'row', label: 'a', node: 1 }));
    const actions: FlameViewAction[] = [
      { type: 'side', side: 'base' },
      { type: 'search', text: 'b' },
      { type: 'culprit', path: ['a'], node: 0 },
      { type: 'reset' },
      { type: 'menu', menu: { node: 1, x: 0, y: 0 } },
      { type: 'normalize', of: {}, norm: 'relative' },
    ];
    const copy = JSON.stringify(s);
    actions.forEach((a) => reduce(s, a));
    expect(JSON.stringify(s)).toBe(copy);
  });

  it('reopens from the view it reports to its host', () => {
    const frames = {};
    const s = run(
      fresh(),
      { type: 'side', side: 'base' },
      { type: 'collapsed', collapsed: true },
      { type: 'significantOnly', significantOnly: false },
      { type: 'culprit', path: ['main', 'c'], node: 3 },
      { type: 'row', label: 'parse', node: 4 }
    );
    const shown = chosenFor(s, frames, 'absolute');
    const view = panelView(s, { norm: shown.norm, own: 'absolute', zoom: ['main'] });
    expect(view).toMatchObject({ side: 'base', collapsed: true, significantOnly: false, row: 'parse', zoom: ['main'] });
    expect(view.normalize).toBeUndefined(); // the query's own normalisation is no choice
    expect(view.search).toBeUndefined();
    const again = initialState(view, 'head');
    expect([again.side, again.collapsed, again.significantOnly, again.text, again.exact]).toEqual([
      s.side,
      s.collapsed,
      s.significantOnly,
      s.text,
      s.exact,
    ]);
    expect(panelView(s, { norm: 'relative', own: 'absolute' }).normalize).toBe('relative');
  });
});
