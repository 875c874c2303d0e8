import { css } from '@emotion/css';

import { GrafanaTheme2 } from '@grafana/data';

export const TREE_ROW_HEIGHT = 22;
/** The room the body's scroll bar takes. */
export const SCROLLBAR = 14;

/** The call tree's styles: made once by the tree and handed to its rows (useStyles2 in each row would cost a scroll). */
export type TreeStyles = ReturnType<typeof getTreeStyles>;

export const getTreeStyles = (theme: GrafanaTheme2) => ({
  wrap: css({
    display: 'flex',
    flexDirection: 'column',
    fontSize: theme.typography.bodySmall.fontSize,
    minWidth: 0,
  }),
  header: css({
    display: 'grid',
    height: TREE_ROW_HEIGHT,
    alignItems: 'center',
    borderBottom: `1px solid ${theme.colors.border.weak}`,
    paddingRight: SCROLLBAR, // the body's scroll bar
  }),
  nameHead: css({ textAlign: 'left', padding: theme.spacing(0, 0.5) }),
  numHead: css({ textAlign: 'right', padding: theme.spacing(0, 0.5) }),
  sort: css({
    background: 'none',
    border: 'none',
    color: 'inherit',
    font: 'inherit',
    fontWeight: theme.typography.fontWeightMedium,
    cursor: 'pointer',
    padding: 0,
    whiteSpace: 'nowrap',
  }),
  scroller: css({ overflowY: 'auto', overflowX: 'hidden', scrollbarGutter: 'stable' }),
  row: css({
    position: 'absolute',
    left: 0,
    right: 0,
    height: TREE_ROW_HEIGHT,
    display: 'grid',
    alignItems: 'center',
    cursor: 'pointer',
    whiteSpace: 'nowrap',
    '&:hover': { background: theme.colors.action.hover },
    '&:focus': { outline: `2px solid ${theme.colors.primary.main}`, outlineOffset: -2 },
  }),
  selected: css({ background: theme.colors.action.selected }),
  noise: css({ color: theme.colors.text.secondary }),
  name: css({ display: 'flex', alignItems: 'center', gap: 4, minWidth: 0, overflow: 'hidden' }),
  twisty: css({ width: 12, flex: 'none', textAlign: 'center' }),
  swatch: css({ width: 10, height: 10, flex: 'none', borderRadius: 2 }),
  label: css({
    flex: '1 1 auto',
    minWidth: 40,
    overflow: 'hidden',
    textOverflow: 'ellipsis',
    fontFamily: theme.typography.fontFamilyMonospace,
  }),
  match: css({ fontWeight: theme.typography.fontWeightBold }),
  mark: css({
    flex: 'none',
    fontSize: 10,
    padding: '0 4px',
    borderRadius: 3,
    border: `1px solid ${theme.colors.border.medium}`,
  }),
  num: css({ textAlign: 'right', padding: theme.spacing(0, 0.5), overflow: 'hidden', textOverflow: 'ellipsis' }),
});
