// Render TeX formulas with KaTeX for literate/katex.py.
// stdin:  one JSON array of [tex, display] pairs per line (a batch);
// stdout: one JSON array per batch, {"html": ...} or {"error": ...} per pair,
//         in order, on one line. The process serves batches until stdin ends.
// KaTeX is found by node's own rules: the working directory's node_modules,
// else NODE_PATH (literate sets both from the plugin's `katex` option).
"use strict";
const readline = require("readline");
const katex = require("katex");

function render([tex, display]) {
  try {
    const html = katex.renderToString(tex, {
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

const lines = readline.createInterface({ input: process.stdin, terminal: false });
lines.on("line", (line) => {
  if (!line.trim()) return;
  process.stdout.write(JSON.stringify(JSON.parse(line).map(render)) + "\n");
});
