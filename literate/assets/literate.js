// Click (or focus) a name in the code, or a symbol in an equation: every use
// of it on the page lights up, in the code, in the prose's `code` and in the
// equations. A symbol is bound to a code name by a `%symbols Q=query` line in
// the source's prose (the page lists them in `data-symbols`); a bound symbol
// and its name light up together. No library; the page reads without it.
//
// Keyboard: each code block is one stop of the Tab order; the arrow keys move
// between its names (Home, End: the first, the last). A formula with bound
// symbols is one stop too (its glyphs are hidden from screen readers, so the
// formula, not a glyph, takes the focus); the arrows move between its
// symbols. Escape clears the highlight.
(() => {
  "use strict";
  const NAMES = "span.n, span.nf, span.nc, span.nn, span.nd, span.nv, span.na";
  const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
  const groups = new Map(); // name -> elements that show it
  const nameOf = new WeakMap(); // element -> its name
  let lit = []; // the elements lit now

  const add = (name, el) => {
    if (!groups.has(name)) groups.set(name, []);
    groups.get(name).push(el);
    nameOf.set(el, name);
  };

  const clear = () => {
    lit.forEach((el) => el.classList.remove("lit-hl", "lit-hl-here"));
    lit = [];
  };

  const light = (name, here) => {
    clear();
    lit = (groups.get(name) || []).slice();
    lit.forEach((el) => el.classList.add("lit-hl"));
    if (here) {
      here.classList.add("lit-hl-here");
      lit.push(here);
    }
  };

  // What a glyph of KaTeX's reads as: its letters, no zero-width spaces.
  const glyphs = (el) => el.textContent.replace(/[\s\u200b]/g, "");

  const page = document.querySelector(".lit-page");
  if (!page) return;
  const bound = new Map(); // symbol as glyphs -> code name
  (page.dataset.symbols || "").split(/\s+/).forEach((pair) => {
    const [tex, name] = pair.split("=");
    if (tex && name) bound.set(tex, name);
  });

  // Names in the code: one Tab stop per block, the arrows inside it.
  page.querySelectorAll(".lit-code pre").forEach((pre) => {
    const stops = [];
    pre.querySelectorAll(NAMES).forEach((span) => {
      if (!IDENTIFIER.test(span.textContent)) return;
      const link = span.closest("a");
      const stop = link || span;
      add(span.textContent, span);
      if (stop !== span) nameOf.set(stop, span.textContent);
      stop.tabIndex = -1;
      stops.push(stop);
    });
    if (!stops.length) return;
    stops[0].tabIndex = 0;
    pre.addEventListener("keydown", (event) => {
      const at = stops.indexOf(document.activeElement);
      if (at < 0) return;
      const to = { ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1,
        ArrowUp: at - 1, Home: 0, End: stops.length - 1 }[event.key];
      if (to === undefined || to < 0 || to >= stops.length) return;
      event.preventDefault();
      stops[at].tabIndex = -1;
      stops[to].tabIndex = 0;
      stops[to].focus();
    });
  });

  // Names the prose writes as code: `query`.
  page.querySelectorAll(".lit-prose code, .lit-original code").forEach((code) => {
    if (code.closest("pre")) return;
    if (IDENTIFIER.test(code.textContent)) add(code.textContent, code);
  });

  // Bound symbols in the equations: the largest glyph group that reads as one.
  const formulas = [];
  if (bound.size) {
    page.querySelectorAll(".lit-prose .katex, .lit-original .katex").forEach(
      (katex) => {
        const found = [];
        const walk = (el) => {
          const name = el.classList.contains("mord") && bound.get(glyphs(el));
          if (name) {
            el.classList.add("lit-sym");
            add(name, el);
            found.push(el);
            return;
          }
          for (const child of el.children) walk(child);
        };
        const html = katex.querySelector(".katex-html");
        if (html) walk(html);
        if (found.length) formulas.push([katex, found]);
      },
    );
  }
  formulas.forEach(([katex, found]) => {
    let at = 0;
    katex.tabIndex = 0;
    katex.classList.add("lit-sym-formula");
    katex.addEventListener("focus", () => {
      light(nameOf.get(found[at]), found[at]);
      focused = found[at]; // a click that focused the formula keeps it lit
    });
    katex.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[
        event.key];
      if (!step) return;
      event.preventDefault();
      at = (at + step + found.length) % found.length;
      light(nameOf.get(found[at]), found[at]);
    });
  });

  const target = (el) => {
    for (let node = el; node && node !== page; node = node.parentElement) {
      if (nameOf.has(node)) return node;
    }
    return null;
  };

  // A click focuses a name first (focusin lights it); a second click on a
  // lit name turns the light off.
  let focused = null;
  page.addEventListener("click", (event) => {
    const el = target(event.target);
    const lightedByFocus = el && el === focused;
    focused = null;
    if (!el) return clear();
    if (lightedByFocus) return;
    if (el.classList.contains("lit-hl-here")) return clear();
    light(nameOf.get(el), el);
  });
  page.addEventListener("focusin", (event) => {
    if (event.target.classList.contains("lit-sym-formula")) return;
    const el = target(event.target);
    if (el && !el.classList.contains("lit-hl-here")) {
      light(nameOf.get(el), el);
      focused = el;
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") clear();
  });
})();
