import React, { Dispatch, useContext } from 'react';

import { FlameData, Normalization } from '../model/flameData';
import { Variant, variantOf } from '../model/variants';
import { FlameViewAction, FlameViewState } from '../flameViewState';
import { FiltersContext } from '../viewState';
import { Toolbar } from './Toolbar';

interface Props {
  state: FlameViewState;
  dispatch: Dispatch<FlameViewAction>;
  data: FlameData;
  /** The variants at hand: a toggle to one that is not is disabled. */
  variants: ReadonlyMap<Variant, unknown>;
  /** The search's match count. */
  matches?: number;
  norm: Normalization;
  onNormalize?: (v: Normalization) => void;
  onFullDetail?: () => void;
  onSandwich?: (fn: string) => void;
}

/**
 * FlameToolbar is the flame view's toolbar, bound to its view state. It is
 * memoised: the view renders again at once when it has measured the
 * toolbar's height, and Grafana's inputs would render again with it.
 */
export const FlameToolbar = React.memo(function FlameToolbar({
  state,
  dispatch,
  data,
  variants,
  matches,
  ...p
}: Props) {
  const filters = useContext(FiltersContext);
  const { inverted, collapsed, text, exact } = state;
  return (
    <Toolbar
      layout={state.layout}
      onLayout={(l) => dispatch({ type: 'layout', layout: l })}
      isDiff={Boolean(data.head)}
      side={state.side}
      onSide={(v) => dispatch({ type: 'side', side: v })}
      inverted={inverted}
      canInvert={variants.has(variantOf(!inverted, collapsed))}
      onInverted={(v) => dispatch({ type: 'inverted', inverted: v })}
      collapsed={collapsed}
      canCollapse={variants.has(variantOf(inverted, !collapsed))}
      onCollapsed={(v) => dispatch({ type: 'collapsed', collapsed: v })}
      search={text}
      onSearch={(t) => dispatch({ type: 'search', text: t })}
      matches={matches}
      onReset={() => dispatch({ type: 'reset' })}
      hasStats={Boolean(data.stats)}
      significantOnly={state.significantOnly}
      onSignificantOnly={(v) => dispatch({ type: 'significantOnly', significantOnly: v })}
      normalize={p.norm}
      onNormalize={p.onNormalize}
      onFullDetail={p.onFullDetail}
      sandwichOf={p.onSandwich && exact && text ? text : undefined}
      onSandwich={p.onSandwich}
      filtersOpen={filters?.open}
      onFilters={filters?.toggle}
    />
  );
});
