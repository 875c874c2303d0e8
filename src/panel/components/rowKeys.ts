import type React from 'react';

/**
 * onRowKey is the keyboard of a focusable table row (the top table, the
 * culprits lists): Enter or Space chooses it, Up and Down move the focus to
 * the row above or below.
 */
export function onRowKey(e: React.KeyboardEvent<HTMLElement>, choose: () => void): void {
  const go = (el: Element | null) => {
    e.preventDefault();
    (el as HTMLElement | null)?.focus();
  };
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    choose();
  } else if (e.key === 'ArrowDown') {
    go(e.currentTarget.nextElementSibling);
  } else if (e.key === 'ArrowUp') {
    go(e.currentTarget.previousElementSibling);
  }
}
