// Render a batch of TeX formulas with KaTeX: one process per page.
// stdin:  JSON array of [tex, display] pairs.
// stdout: JSON array, one {"html": ...} or {"error": ...} per pair, in order.
"use strict";
const katex = require("katex");

const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  const formulas = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const results = formulas.map(([tex, display]) => {
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
  });
  process.stdout.write(JSON.stringify(results));
});
