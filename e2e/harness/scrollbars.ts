// react-custom-scrollbars-2 is CommonJS with an __esModule default; the
// .mjs files of @grafana/ui import its default, which esbuild reads with
// Node's rules (the whole exports object). Imported from TypeScript, the
// default is the component, as Grafana's own bundler gives it.
// @ts-expect-error the file itself is untyped; the package's types describe its exports
import Scrollbars from '../../node_modules/react-custom-scrollbars-2/lib/index.js';

export default Scrollbars;
