// markdown.js -- safe Markdown for user and model text.  markdown-it with
// html: false escapes raw HTML (a model's <thinking> shows as text) and its
// link check drops javascript:, vbscript:, file: and non-image data: URLs;
// the page's Content-Security-Policy forbids inline script besides.  Links
// open in a new tab without referrer.
import markdownit from './markdown-it.mjs';

const md = markdownit({ html: false, linkify: false, breaks: true });
const defaultLink = md.renderer.rules.link_open ||
  ((tokens, i, opts, env, self) => self.renderToken(tokens, i, opts));
md.renderer.rules.link_open = (tokens, i, opts, env, self) => {
  tokens[i].attrSet('target', '_blank');
  tokens[i].attrSet('rel', 'noopener noreferrer nofollow');
  return defaultLink(tokens, i, opts, env, self);
};

// Renders text into el (replacing its content) and returns el.
export function renderMarkdown(el, text) {
  el.classList.add('md');
  el.innerHTML = md.render(text || '');
  return el;
}
