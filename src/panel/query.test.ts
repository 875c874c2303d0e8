import { PanelData } from '@grafana/data';
import { TemplateSrv, locationService, setTemplateSrv } from '@grafana/runtime';

import { askedByQuery, keepAround, keepNormalization } from './query';

// A template service with just the dashboard's variable list, which is all
// keepNormalization asks of it; the location service is Grafana's own.
const withVariables = (names: string[]) =>
  setTemplateSrv({ getVariables: () => names.map((name) => ({ name })) } as unknown as TemplateSrv);

describe('keepNormalization', () => {
  beforeEach(() => locationService.partial({ 'var-normalize': undefined }, true));

  it('writes the choice into the dashboard variable (the URL) when the dashboard has one', () => {
    withVariables(['app', 'normalize']);
    keepNormalization('relative');
    expect(locationService.getSearchObject()['var-normalize']).toBe('relative');
  });

  it('leaves the URL alone when the dashboard has no such variable', () => {
    withVariables(['app']);
    keepNormalization('relative');
    expect(locationService.getSearchObject()['var-normalize']).toBeUndefined();
  });
});

describe('keepAround and askedByQuery', () => {
  const vars = ['var-sandwich', 'var-keep', 'var-drop', 'var-hideFrames', 'var-showFrom', 'var-only'];
  beforeEach(() => locationService.partial(Object.fromEntries(vars.map((v) => [v, undefined])), true));

  it('writes the ask into the variables the dashboard has and empties the others of it', () => {
    withVariables(['keep', 'only', 'sandwich']);
    locationService.partial({ 'var-sandwich': 'F' }, true);
    keepAround({ keep: 'checkout/', only: 'new' });
    const url = locationService.getSearchObject();
    expect(url['var-keep']).toBe('checkout/');
    expect(url['var-only']).toBe('new');
    // The sandwich closed: its variable is emptied.
    expect(url['var-sandwich']).toBe('');
    // No such variable: not written.
    expect(url['var-drop']).toBeUndefined();
  });

  it("reads the panel query's ask with its variables replaced, raw", () => {
    const values: Record<string, string> = { $keep: 'a|b', $sandwich: '' };
    setTemplateSrv({
      getVariables: () => [],
      replace: (s: string, _: unknown, format: string) => (format === 'raw' ? (values[s] ?? s) : 'escaped'),
    } as unknown as TemplateSrv);
    const target = { refId: 'A', queryType: 'diff', keep: '$keep', sandwich: '$sandwich', drop: 'gc' };
    const data = { series: [], request: { targets: [target] } } as unknown as PanelData;
    expect(askedByQuery(data)).toEqual({ keep: 'a|b', drop: 'gc' });
    // Not a flame graph query: nothing asked.
    const runs = { series: [], request: { targets: [{ ...target, queryType: 'runs' }] } } as unknown as PanelData;
    expect(askedByQuery(runs)).toEqual({});
  });
});
