// The chat webview's script as one file, out/webview/chat.js: src/webview/chat.ts with
// markdown-it and its dependencies bundled in (a webview loads nothing from elsewhere).
// Their licences (MIT) travel with the bundle, at its top.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NOTICE = `/*! tether's chat view. Bundled, each under the MIT licence:
 * markdown-it, Copyright (c) 2014 Vitaly Puzrin, Alex Kocharin;
 * mdurl, Copyright (c) 2015 Vitaly Puzrin, Alex Kocharin;
 * linkify-it, Copyright (c) 2015 Vitaly Puzrin;
 * uc.micro and punycode.js, Copyright Mathias Bynens <https://mathiasbynens.be/>. */`;

await build({
  entryPoints: [path.join(root, 'src/webview/chat.ts')],
  outfile: path.join(root, 'out/webview/chat.js'),
  bundle: true,
  format: 'esm',
  target: 'es2022',
  minify: true,
  legalComments: 'eof',
  banner: { js: NOTICE },
  logLevel: 'warning',
});
