import { css, cx } from '@emotion/css';
import React, { useLayoutEffect, useRef, useState } from 'react';

import { GrafanaTheme2 } from '@grafana/data';
import { useStyles2 } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { formatP, formatShare } from '../format';
import { Culprit, Culprits as CulpritsData, samePath, segments, source } from '../model/culprits';
import { DIFF_STEPS, Palette, diffPaletteCSS } from '../render/colors';
import { onRowKey } from './rowKeys';
import { srOnly } from './srOnly';

interface Props {
  culprits: CulpritsData;
  palette: Palette;
  /** The chosen culprit's path (highlighted in the graph). */
  selected?: string[];
  /** A click or Enter on a culprit. */
  onSelect: (c: Culprit) => void;
  /** Opens a function's callers and callees, where the panel can (not in a report). */
  onSandwich?: (fn: string) => void;
  /** Room it may take; it scrolls beyond. */
  maxHeight: number;
  /** Its height as drawn, for the graph below it. */
  onHeight: (h: number) => void;
}

const s = strings.panel.culprits;

/**
 * Culprits shows the backend's verdict of a diff (pkg/verdict: the same
 * sentence as the CLI gate, the markdown comment and MCP) and the culprits
 * of the drawn tree, regressions and improvements in two lists. A click or
 * Enter on a culprit calls onSelect; rows are reached by Tab and the arrows.
 */
export function Culprits({ culprits, palette, selected, onSelect, onSandwich, maxHeight, onHeight }: Props) {
  const styles = useStyles2(getStyles);
  const [open, setOpen] = useState(true);
  const box = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const el = box.current!;
    const observer = new ResizeObserver(() => onHeight(el.offsetHeight));
    observer.observe(el);
    onHeight(el.offsetHeight);
    return () => observer.disconnect();
  }, [onHeight]);
  const { verdict, regressions, improvements } = culprits;
  const colors = diffPaletteCSS(palette);
  const count = regressions.length + improvements.length;
  return (
    <section
      ref={box}
      className={styles.box}
      style={{ maxHeight }}
      aria-label={s.region}
      data-testid={selectors.panel.verdict}
      data-result={verdict?.result}
    >
      {verdict && (
        <div className={styles.headline}>
          <strong className={cx(styles.result, verdict.result === 'FAIL' && styles.fail)}>{verdict.result}:</strong>{' '}
          <span data-testid={selectors.panel.verdictHeadline}>
            {segments(verdict.headline).map((seg, i) =>
              seg.code ? <code key={i}>{seg.text}</code> : <React.Fragment key={i}>{seg.text}</React.Fragment>
            )}
          </span>
          {verdict.why !== verdict.headline && <span className={styles.muted}> {verdict.why}</span>}
          {verdict.power && (
            <span className={styles.muted} data-testid={selectors.panel.verdictPower}>
              {' '}
              {verdict.power}
            </span>
          )}
          {count > 0 && (
            <button
              className={cx(styles.action, styles.toggle)}
              aria-expanded={open}
              data-testid={selectors.panel.culpritsToggle}
              onClick={() => setOpen((o) => !o)}
            >
              {open ? s.hide : s.show(count)}
            </button>
          )}
        </div>
      )}
      {open && (
        <>
          <List
            title={s.regressions}
            culprits={regressions}
            color={colors[2 * DIFF_STEPS]}
            selected={selected}
            onSelect={onSelect}
            onSandwich={onSandwich}
          />
          <List
            title={s.improvements}
            culprits={improvements}
            color={colors[0]}
            selected={selected}
            onSelect={onSelect}
            onSandwich={onSandwich}
          />
        </>
      )}
    </section>
  );
}

function List({
  title,
  culprits,
  color,
  selected,
  onSelect,
  onSandwich,
}: {
  title: string;
  culprits: Culprit[];
  color: string;
  selected?: string[];
  onSelect: (c: Culprit) => void;
  onSandwich?: (fn: string) => void;
}) {
  const styles = useStyles2(getStyles);
  if (culprits.length === 0) {
    return null;
  }
  const caption = `${title} (${culprits.length})`;
  return (
    <table className={styles.table} data-testid={selectors.panel.culprits} aria-label={caption}>
      <caption className={styles.caption}>
        <span className={styles.swatch} style={{ background: color }} />
        {caption}
      </caption>
      <thead>
        <tr>
          <th style={{ width: '7em' }}>{s.kind}</th>
          <th className={styles.left}>{s.function}</th>
          <th style={{ width: '6em' }}>{s.change}</th>
          <th style={{ width: '12em' }}>{s.ci}</th>
          <th style={{ width: '5.5em' }}>{s.q}</th>
          <th style={{ width: '4.5em' }}>{s.share}</th>
          <th className={styles.left}>{s.source}</th>
          {onSandwich && (
            <th style={{ width: '2.5em' }}>
              <span style={srOnly}>{strings.panel.around.sandwichShort}</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {culprits.map((c, i) => {
          const path = c.path.length > 0 ? c.path.join(' › ') : s.wholeProfile;
          const where = source(c);
          return (
            <tr
              key={i}
              data-testid={selectors.panel.culprit}
              data-function={c.function}
              className={cx(styles.row, samePath(c.path, selected) && styles.selected)}
              tabIndex={0}
              aria-selected={samePath(c.path, selected)}
              title={s.zoomHint}
              onClick={() => onSelect(c)}
              onKeyDown={(e) => onRowKey(e, () => onSelect(c))}
            >
              <td>{s.kinds[c.kind]?.(c.regression) ?? c.kind}</td>
              <td className={styles.ellipsis} title={[c.function, path, ...extras(c)].join('\n')}>
                <code>{c.function}</code>
                <span className={styles.muted}>
                  {' '}
                  {c.path.length > 1 ? s.via(c.path.slice(0, -1).join(' › ')) : c.path.length === 0 ? path : ''}
                  {extras(c).map((x) => ` · ${x}`)}
                </span>
              </td>
              <td>{formatShare(c.delta, true)}</td>
              <td>
                {formatShare(c.deltaLow, true)} .. {formatShare(c.deltaHigh, true)}
              </td>
              <td>{formatP(c.qValue)}</td>
              <td>{Number.isFinite(c.share) ? `${(100 * c.share).toFixed(0)}%` : '–'}</td>
              <td className={styles.ellipsis} title={[c.modified ? s.modified : '', where].filter(Boolean).join('\n')}>
                {c.modified && <span className={styles.modified}>{s.modified}</span>}
                {c.modified && where && ' '}
                {where}
              </td>
              {onSandwich && (
                <td>
                  {c.path.length > 0 && (
                    <button
                      className={styles.action}
                      data-testid={selectors.panel.culpritSandwich}
                      aria-label={strings.panel.around.sandwich(c.function)}
                      title={strings.panel.around.sandwich(c.function)}
                      onClick={(e) => {
                        e.stopPropagation();
                        onSandwich(c.function);
                      }}
                      onKeyDown={(e) => e.stopPropagation()}
                    >
                      ⇅
                    </button>
                  )}
                </td>
              )}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** extras are what a culprit's name cell adds after its path: other sites and the callee (or what it replaced). */
function extras(c: Culprit): string[] {
  const out: string[] = [];
  if (c.otherSites.length > 0) {
    out.push(s.otherSites(c.otherSites.length));
  }
  if (c.kind === 'replaced' && c.replaced) {
    out.push(s.replaced(c.replaced, c.callee));
  } else if (c.kind === 'removed' && c.replaced) {
    // the callee gone, never a sibling of it
    out.push(s.gone(c.replaced));
  } else if (c.callee) {
    out.push(s.callee(c.callee));
  }
  return out;
}

const getStyles = (theme: GrafanaTheme2) => ({
  box: css({
    flex: 'none',
    overflowY: 'auto',
    padding: theme.spacing(0.5, 1),
    borderBottom: `1px solid ${theme.colors.border.weak}`,
    fontSize: theme.typography.bodySmall.fontSize,
    lineHeight: 1.5,
  }),
  headline: css({ marginBottom: theme.spacing(0.5) }),
  result: css({ color: theme.colors.text.primary }),
  fail: css({ color: theme.colors.error.text }),
  muted: css({ color: theme.colors.text.secondary }),
  // Buttons that read as links: the fold toggle and a culprit's callers and callees.
  action: css({
    background: 'none',
    border: 'none',
    padding: 0,
    color: theme.colors.text.link,
    font: 'inherit',
    cursor: 'pointer',
  }),
  toggle: css({ marginLeft: theme.spacing(1) }),
  // Fixed layout: the name and source columns share what the figures leave
  // and ellipsise; no column is ever pushed out of the panel.
  table: css({
    width: '100%',
    tableLayout: 'fixed',
    borderCollapse: 'collapse',
    marginBottom: theme.spacing(0.5),
    'th, td': { padding: theme.spacing(0.125, 1), whiteSpace: 'nowrap', textAlign: 'right' },
    th: { fontWeight: theme.typography.fontWeightMedium, color: theme.colors.text.secondary },
    'th:first-child, td:first-child': { textAlign: 'left' },
  }),
  caption: css({ textAlign: 'left', fontWeight: theme.typography.fontWeightMedium }),
  swatch: css({ display: 'inline-block', width: 10, height: 10, marginRight: theme.spacing(0.5) }),
  left: css({ textAlign: 'left !important' as 'left' }),
  ellipsis: css({ overflow: 'hidden', textOverflow: 'ellipsis', textAlign: 'left !important' as 'left' }),
  row: css({
    cursor: 'pointer',
    '&:hover': { background: theme.colors.action.hover },
    '&:focus': { outline: `2px solid ${theme.colors.primary.main}`, outlineOffset: -2 },
  }),
  selected: css({ background: theme.colors.action.selected }),
  modified: css({
    padding: theme.spacing(0, 0.5),
    borderRadius: theme.shape.radius.default,
    background: theme.colors.warning.transparent,
    color: theme.colors.warning.text,
  }),
});
