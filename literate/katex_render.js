// Render TeX formulas with KaTeX for literate/katex.py, in one of two hosts.
//
// In-process (the default): literate loads katex.min.js and then this file
// into an embedded V8 (mini-racer); `katex` is then a global, and Python
// calls `literateRenderBatch(json)` once per batch.
//
// node (the fallback): `node katex_render.js` reads one JSON array of
// [tex, display] pairs per line from stdin and writes one JSON array per
// batch on one line, until stdin ends. KaTeX is found by node's own rules:
// the working directory's node_modules, else NODE_PATH.
//
// Either way a batch's reply holds {"html": ...} or {"error": ...} per pair,
// in order.
"use strict";

var katexModule = typeof katex !== "undefined" ? katex : require("katex");

function literateRender([tex, display]) {
  try {
    const html = katexModule.renderToString(tex, {
      displayMode: display,
      output: "htmlAndMathml", // MathML for screen readers
      throwOnError: true, // a bad formula fails the build, never the page
      trust: false, // no \href, \url or \htmlClass from prose
      strict: "ignore",
    });
    return { html };
  } catch (error) {
    return { error: String(error.message || error) };
  }
}

function literateRenderBatch(line) {
  return JSON.stringify(JSON.parse(line).map(literateRender));
}

if (typeof module !== "undefined" && require.main === module) {
  const readline = require("readline");
  const lines = readline.createInterface({
    input: process.stdin,
    terminal: false,
  });
  lines.on("line", (line) => {
    if (!line.trim()) return;
    process.stdout.write(literateRenderBatch(line) + "\n");
  });
}
