import { css } from '@emotion/css';
import React from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { formatP, formatShare } from '../../panel/format';
import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { NodeChange, Verdict as VerdictData } from '../verdict';

const s = strings.report;
const SHOWN = 5;

/** Verdict sums up a diff's statistics above the panel: the total's change and the significant functions. */
export function Verdict({ verdict }: { verdict: VerdictData }) {
  const styles = useStyles2(getStyles);
  if (!verdict.stats) {
    return (
      <div className={styles.box} data-testid={selectors.report.verdict} data-stats="false">
        <strong>{s.noStats}</strong> {verdict.notice}
      </div>
    );
  }
  const { total } = verdict;
  const headline = !total.significant ? s.unchanged : total.delta > 0 ? s.slower : s.faster;
  return (
    <div className={styles.box} data-testid={selectors.report.verdict} data-stats="true">
      <strong className={total.significant ? (total.delta > 0 ? styles.slower : styles.faster) : undefined}>
        {headline}
      </strong>{' '}
      <span data-testid={selectors.report.verdictChange}>{describe(total)}</span>
      {verdict.alpha !== undefined && <span className={styles.muted}> ({s.alpha(verdict.alpha)})</span>}
      <Changes title={s.slowerNodes(verdict.slower.length)} changes={verdict.slower} className={styles.slower} />
      <Changes title={s.fasterNodes(verdict.faster.length)} changes={verdict.faster} className={styles.faster} />
    </div>
  );
}

function Changes({ title, changes, className }: { title: string; changes: NodeChange[]; className: string }) {
  return (
    <div>
      {title}
      {changes.length > 0 && ': '}
      {changes.slice(0, SHOWN).map((c, i) => (
        <span key={i}>
          {i > 0 && ', '}
          <code className={className}>{c.label}</code> {describe(c)}
        </span>
      ))}
      {changes.length > SHOWN && ', …'}
    </div>
  );
}

/** describe gives a change with its interval and q-value, as far as they are defined. */
function describe(c: NodeChange): string {
  const ci =
    c.low !== undefined || c.high !== undefined
      ? ` ${s.interval} [${c.low !== undefined ? formatShare(c.low, true) : '–'}, ${c.high !== undefined ? formatShare(c.high, true) : '–'}]`
      : '';
  const q = c.q !== undefined ? `, ${s.q} ${formatP(c.q).startsWith('<') ? '' : '= '}${formatP(c.q)}` : '';
  return `${formatShare(c.delta, true)}${ci}${q}`;
}

const getStyles = (theme: GrafanaTheme2) => ({
  box: css({
    padding: theme.spacing(1, 2),
    borderBottom: `1px solid ${theme.colors.border.weak}`,
    fontSize: theme.typography.bodySmall.fontSize,
    lineHeight: 1.6,
  }),
  slower: css({ color: theme.colors.error.text }),
  faster: css({ color: theme.colors.success.text }),
  muted: css({ color: theme.colors.text.secondary }),
});
