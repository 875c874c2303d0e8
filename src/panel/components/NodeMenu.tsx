import React from 'react';

import { ContextMenu, Menu } from '@grafana/ui';

import { selectors } from '../../selectors';
import { strings } from '../../strings';
import { FlameData } from '../model/flameData';

interface Props {
  data: FlameData;
  /** The node the menu was opened on, and where. */
  menu: { node: number; x: number; y: number };
  onClose: () => void;
  /** Opens callers and callees of a function. */
  onSandwich: (fn: string) => void;
}

/** NodeMenu is a graph node's context menu: its function's callers and callees. */
export function NodeMenu({ data, menu, onClose, onSandwich }: Props) {
  const label = menu.node < data.n ? data.labels[data.labelIdx[menu.node]] : undefined;
  if (!label) {
    return null;
  }
  return (
    <ContextMenu
      x={menu.x}
      y={menu.y}
      focusOnOpen
      onClose={onClose}
      renderHeader={() => <span data-testid={selectors.panel.nodeMenu}>{label}</span>}
      renderMenuItems={() => (
        <Menu.Item
          label={strings.panel.around.sandwich(label)}
          icon="exchange-alt"
          onClick={() => {
            onClose();
            onSandwich(label);
          }}
        />
      )}
    />
  );
}
