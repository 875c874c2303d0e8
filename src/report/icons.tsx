// Stands in for react-inlinesvg in the report and local UI bundles (see
// build.mjs): @grafana/ui's Icon fetches each SVG from Grafana's public path,
// which a page opened from disk cannot do, so the icons these pages show are
// bundled and drawn inline. An icon not listed draws nothing.
import React, { useEffect } from 'react';

import angleDown from 'grafana-icons/unicons/angle-down.svg';
import angleRight from 'grafana-icons/unicons/angle-right.svg';
import angleUp from 'grafana-icons/unicons/angle-up.svg';
import check from 'grafana-icons/unicons/check.svg';
import exchangeAlt from 'grafana-icons/unicons/exchange-alt.svg';
import exclamationCircle from 'grafana-icons/unicons/exclamation-circle.svg';
import exclamationTriangle from 'grafana-icons/unicons/exclamation-triangle.svg';
import filter from 'grafana-icons/unicons/filter.svg';
import history from 'grafana-icons/unicons/history.svg';
import infoCircle from 'grafana-icons/unicons/info-circle.svg';
import play from 'grafana-icons/unicons/play.svg';
import search from 'grafana-icons/unicons/search.svg';
import searchPlus from 'grafana-icons/unicons/search-plus.svg';
import sync from 'grafana-icons/unicons/sync.svg';
import times from 'grafana-icons/unicons/times.svg';

const icons: Record<string, string> = {
  'angle-down': angleDown,
  'angle-right': angleRight,
  'angle-up': angleUp,
  check,
  'exchange-alt': exchangeAlt,
  'exclamation-circle': exclamationCircle,
  'exclamation-triangle': exclamationTriangle,
  filter,
  history,
  'info-circle': infoCircle,
  play,
  search,
  'search-plus': searchPlus,
  sync,
  times,
};

interface Props extends React.SVGProps<SVGSVGElement> {
  src: string;
  onLoad?: () => void;
  innerRef?: React.Ref<SVGSVGElement>;
  cacheRequests?: boolean;
  loader?: React.ReactNode;
}

/** InlineIcon draws the bundled icon named by src's file name (".../unicons/NAME.svg"). */
export default function InlineIcon({ src, onLoad, innerRef, cacheRequests, loader, ...rest }: Props) {
  const svg = icons[src.replace(/^.*\//, '').replace(/\.svg$/, '')] ?? '';
  useEffect(() => onLoad?.(), [src, onLoad]);
  const viewBox = /viewBox="([^"]*)"/.exec(svg)?.[1] ?? '0 0 24 24';
  const inner = svg.replace(/^<svg[^>]*>/, '').replace(/<\/svg>\s*$/, '');
  return <svg {...rest} ref={innerRef} viewBox={viewBox} dangerouslySetInnerHTML={{ __html: inner }} />;
}
