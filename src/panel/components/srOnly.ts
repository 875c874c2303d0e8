/**
 * srOnly hides an element from sight but not from screen readers: the style
 * of the panels' aria-live regions (flame graph and evolution matrix).
 */
export const srOnly = {
  position: 'absolute',
  width: 1,
  height: 1,
  overflow: 'hidden',
  clip: 'rect(0 0 0 0)',
  whiteSpace: 'nowrap',
} as const;
