import { TemplateSrv, locationService, setTemplateSrv } from '@grafana/runtime';

import { keepNormalization } from './query';

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
