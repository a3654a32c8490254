/**
 * The model's answers as Markdown, safely: markdown-it with raw HTML off (`<script>` in an
 * answer is shown as text), no images (nothing is fetched), links only to http(s) and
 * mailto. The webview (bundled with markdown-it) parses the result inertly and keeps only
 * the tags and attributes listed here before it shows anything, under a CSP that runs no
 * inline script and loads nothing but the extension's own files.
 */

import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });
md.disable(['image']);
md.validateLink = (url: string): boolean => SAFE_LINK.test(url.trim());

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

/** The tags markdown-it makes from Markdown (and only those): anything else is dropped. */
export const ALLOWED_TAGS: ReadonlySet<string> = new Set([
  'a', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr',
  'li', 'ol', 'p', 'pre', 's', 'strong', 'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul',
]);

/** Whether an element of an allowed tag may keep an attribute. */
export function allowedAttribute(tag: string, name: string, value: string): boolean {
  switch (`${tag} ${name}`) {
    case 'a href':
      return SAFE_LINK.test(value.trim());
    case 'code class':
      return /^language-[\w+#.-]{1,40}$/.test(value);
    case 'ol start':
      return /^\d{1,9}$/.test(value);
    default:
      return false;
  }
}

/** HTML for `text` as Markdown; every tag in it is one of ALLOWED_TAGS. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}
