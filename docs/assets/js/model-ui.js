// The explorer and the generation box of chapter 5, built once the reader
// opens them (model-loader.js loads this script and the model first).
//
// `page` is the data the page's example handed over (generate.py,
// `model_in_page`): the passage, the command line's defaults and every word
// the widgets show, in the page's language. Nothing here retypes a number
// of the model or a word of the page.
(function () {
  "use strict";

  // "{name}" fields of a word, as Python's str.format fills them.
  const fill = (word, fields) =>
    word.replace(/\{(\w+)\}/g, (all, name) => (name in fields ? fields[name] : all));

  function element(tag, attributes = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) {
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, value);
    }
    node.append(...children);
    return node;
  }

  let unique = 0;
  const id = (name) => `lit-model-${name}-${++unique}`;

  function labelled(text, control) {
    control.id = control.id || id("control");
    return element("label", { for: control.id }, text, control);
  }

  function numberInput(value, attributes) {
    return element("input", { type: "number", value: String(value), ...attributes });
  }

  window.literateModelUI = function (box, page, api) {
    const w = page.words;
    const L = page.layers, H = page.heads, M = page.context;
    // How a character is shown in the strip and named in the read-out, as
    // the figures draw them: the newline as ↵, the space as ·.
    const shown = (c) => (c === "\n" ? "↵" : c === " " ? "·" : c);
    const named = (c) =>
      c === "\n" ? w.newline : c === " " ? w.space : fill(w.quoted, { char: c });

    // ## The explorer
    const text = element("textarea", { rows: "3", maxlength: String(M), spellcheck: "false" });
    text.value = page.passage;
    const layer = element("select");
    const head = element("select");
    // Layers, heads and positions numbered from 0, as the code, the figures
    // and the table of heads name them.
    for (let l = 0; l < L; l++) layer.append(element("option", { value: l, text: l }));
    for (let h = 0; h < H; h++) head.append(element("option", { value: h, text: h }));
    const chosen = () => [Number(layer.value), Number(head.value)];
    // The heads the page's figures name by their pattern ("line start"),
    // one button each: the prose's "try it with the line start head" is
    // then one click, not a look-up of its layer and head.
    const shortcuts = (page.named || []).map(([name, l, h]) => {
      const button = element("button", {
        type: "button", class: "lit-model-chip",
        text: fill(w.named_head, { name, layer: l, head: h }),
      });
      button.addEventListener("click", () => {
        layer.value = l;
        head.value = h;
        draw();
      });
      return [button, l, h];
    });
    const namedHeads = element("p", { class: "lit-model-named" },
      element("span", { text: w.named }), ...shortcuts.map(([button]) => button));
    const all = element("input", { type: "checkbox" });
    const strip = element("div", {
      class: "lit-model-strip", role: "listbox", "aria-label": w.strip, id: id("strip"),
    });
    const readout = element("p", { class: "lit-model-readout", "aria-live": "polite" });
    const kept = element("p", { class: "lit-model-note" }); // whether the query is kept
    const grid = element("div", { class: "lit-model-grid" });
    const gridNote = element("p", { class: "lit-model-note", text: w.grid_note });
    const heads = element("div", { hidden: "" }, gridNote, grid);
    const problem = element("p", { class: "lit-model-problem", role: "alert" });
    const explorer = element(
      "fieldset", { class: "lit-model-explorer" },
      element("legend", { text: w.explorer }),
      labelled(fill(w.text, { n: M }), text),
      element("div", { class: "lit-model-row" },
        labelled(w.layer, layer), labelled(w.head, head), labelled(w.all_heads, all)),
      namedHeads, strip, readout, kept, heads, problem,
    );
    explorer.tabIndex = -1; // where the keyboard's focus goes once it is built

    // What the explorer shows: `chars`, and rows(l, h, t), the weights of
    // query t over 0..t, or null where they are not known (while text is
    // being written, only the newest character's are). A click pins the
    // query: pointing then moves it no more, until Esc.
    const view = { chars: [], rows: () => null, query: 0, pinned: false };

    function setText(chars, rows, query) {
      view.chars = chars;
      view.rows = rows;
      view.query = Math.min(query, chars.length - 1);
      strip.replaceChildren(...chars.map((c, i) => element("span", {
        role: "option", "data-i": String(i), tabindex: "-1",
        class: c === "\n" ? "lit-model-newline" : "",
        "aria-label": fill(w.option, { char: named(c), pos: i }),
      }, shown(c))));
      draw();
    }

    function draw() {
      if (view.chars.length === 0) { // a text the model cannot read: nothing
        readout.textContent = kept.textContent = "";
        grid.replaceChildren();
        return;
      }
      const t = view.query, [l, h] = chosen();
      for (const [button, bl, bh] of shortcuts) {
        button.setAttribute("aria-pressed", String(bl === l && bh === h));
      }
      const row = view.rows(l, h, t);
      for (const option of strip.querySelectorAll("[role=option]")) {
        const i = Number(option.dataset.i);
        const weight = row && i <= t ? row[i] : 0;
        // The square root, as the figures' colour scale: a few percent shows.
        option.style.setProperty("--w", Math.sqrt(weight).toFixed(3));
        const query = i === t;
        option.classList.toggle("lit-model-query", query);
        option.classList.toggle("lit-model-pinned", query && view.pinned);
        option.setAttribute("aria-selected", String(query));
        option.tabIndex = query ? 0 : -1;
      }
      if (!row) {
        readout.textContent = w.unknown_row;
      } else {
        const top = [...row].map((p, j) => [p, j]).sort((a, b) => b[0] - a[0]).slice(0, 3)
          .map(([p, j]) => fill(w.weight, { char: named(view.chars[j]), pos: j,
            p: p.toFixed(2) })).join(w.list_separator);
        readout.textContent = fill(w.query, {
          char: named(view.chars[t]), pos: t, layer: l, head: h, top,
        });
      }
      kept.textContent = view.pinned ? w.pinned : w.pin_hint;
      heads.hidden = !all.checked;
      if (all.checked) drawGrid();
    }

    // All heads as small multiples: one bar a key, from the first character
    // to the query, its height the weight; a grey column under a newline.
    function drawGrid() {
      const t = view.query, svg = "http://www.w3.org/2000/svg";
      const rect = (x, y, height, className) => {
        const bar = document.createElementNS(svg, "rect");
        bar.setAttribute("x", x);
        bar.setAttribute("y", y);
        bar.setAttribute("width", 1);
        bar.setAttribute("height", height);
        if (className) bar.setAttribute("class", className);
        return bar;
      };
      const panels = [];
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const row = view.rows(l, h, t);
          const picture = document.createElementNS(svg, "svg");
          picture.setAttribute("viewBox", `0 0 ${t + 1} 1`);
          picture.setAttribute("preserveAspectRatio", "none");
          picture.setAttribute("aria-hidden", "true");
          for (let j = 0; j <= t; j++) {
            if (view.chars[j] === "\n") picture.append(rect(j, 0, 1, "lit-model-nl"));
          }
          for (let j = 0; row && j <= t; j++) {
            const height = Math.sqrt(row[j]);
            picture.append(rect(j, 1 - height, height));
          }
          const pressed = l === chosen()[0] && h === chosen()[1];
          // A number stays with its word ("head 3"), in every language.
          const name = fill(w.panel, { layer: l, head: h })
            .replace(/ (\d)/g, "\u00a0$1");
          const panel = element("button", {
            type: "button", class: "lit-model-panel", "aria-pressed": String(pressed),
          }, element("span", { text: name }), picture);
          panel.addEventListener("click", () => {
            layer.value = l;
            head.value = h;
            draw();
          });
          panels.push(panel);
        }
      }
      grid.replaceChildren(...panels);
    }

    let pending = null;
    async function explore() {
      const chars = [...text.value];
      problem.textContent = "";
      const bad = chars.findIndex((c) => !page.vocab.includes(c));
      if (chars.length === 0 || bad >= 0) {
        problem.textContent = chars.length === 0 ? w.empty
          : fill(w.not_in_vocab, { char: named(chars[bad]), pos: bad });
        setText([], () => null, 0); // no strip or read-out of the text before
        return;
      }
      const asked = text.value;
      const maps = await api.attention(asked);
      if (asked !== text.value) return; // typed on meanwhile
      setText(chars, (l, h, t) => maps[l][h][t].slice(0, t + 1), view.query);
    }
    text.addEventListener("input", () => {
      clearTimeout(pending);
      pending = setTimeout(explore, 150);
    });
    layer.addEventListener("change", draw);
    head.addEventListener("change", draw);
    all.addEventListener("change", draw);

    // Pointing at a character previews it as the query while none is
    // pinned; a click, a tap or the keyboard's focus pins it, the arrow keys
    // (and Home, End) move the pinned query, and Esc releases it.
    const pick = (pin) => (event) => {
      const option = event.target.closest("[role=option]");
      if (!option || (view.pinned && !pin)) return;
      const i = Number(option.dataset.i);
      if (i === view.query && view.pinned === pin) return;
      view.query = i;
      view.pinned = view.pinned || pin;
      draw();
    };
    strip.addEventListener("pointerover", pick(false));
    strip.addEventListener("click", pick(true));
    strip.addEventListener("focusin", pick(true));
    strip.addEventListener("keydown", (event) => {
      const moves = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 };
      let to = view.query;
      if (event.key === "Escape" && view.pinned) {
        event.preventDefault();
        view.pinned = false;
        draw();
        return;
      }
      if (event.key in moves) to += moves[event.key];
      else if (event.key === "Home") to = 0;
      else if (event.key === "End") to = view.chars.length - 1;
      else return;
      event.preventDefault();
      view.query = Math.max(0, Math.min(view.chars.length - 1, to));
      view.pinned = true;
      draw();
      strip.querySelector(`[data-i="${view.query}"]`).focus();
    });

    // ## Generation
    const prompt = element("input", { type: "text", value: page.prompt, spellcheck: "false" });
    const count = numberInput(page.tokens, { min: "1", max: "100000", step: "1" });
    // Steps of 0.1 from 0.1: the default 0.8 is valid, and the arrow keys
    // give 0.9 and 0.7 (from 0.01 they gave 0.81, which the browser marks
    // invalid). A value typed between steps is still read.
    const temperature = numberInput(page.temperature, { min: "0.1", step: "0.1" });
    const topK = numberInput(page.top_k, { min: "0", max: String(page.vocab.length), step: "1" });
    const seed = numberInput(page.seed, { min: "0", max: String(page.seed_max), step: "1" });
    const go = element("button", { type: "button", class: "md-button md-button--primary",
      text: w.generate });
    const stop = element("button", { type: "button", class: "md-button", text: w.stop });
    stop.disabled = true;
    const follow = element("input", { type: "checkbox", checked: "" });
    const output = element("pre", { class: "lit-model-output", tabindex: "0",
      role: "region", "aria-label": w.output });
    const progress = element("p", { class: "lit-model-progress", role: "status" });
    const generation = element(
      "fieldset", { class: "lit-model-generate" },
      element("legend", { text: w.generation }),
      element("div", { class: "lit-model-row" },
        labelled(w.prompt, prompt), labelled(w.tokens, count),
        labelled(w.temperature, temperature), labelled(w.top_k, topK),
        labelled(w.seed, seed)),
      element("div", { class: "lit-model-row" }, go, stop, labelled(w.follow, follow)),
      element("p", { class: "lit-model-note", text: w.rng_note }),
      output, progress,
    );

    // A field's value, or a one-line problem naming the field.
    function read(input, name, test, expected) {
      const value = Number(input.value);
      if (input.value.trim() === "" || !test(value)) {
        throw new Error(fill(w.bad_value, { field: name, expected, typed: input.value }));
      }
      return value;
    }

    let stopped = false;
    stop.addEventListener("click", () => { stopped = true; });
    go.addEventListener("click", async () => {
      let options, n;
      try {
        const chars = [...prompt.value];
        const bad = chars.findIndex((c) => !page.vocab.includes(c));
        if (chars.length === 0) throw new Error(w.empty_prompt);
        if (bad >= 0) throw new Error(fill(w.not_in_vocab, { char: named(chars[bad]), pos: bad }));
        n = read(count, w.tokens, (v) => Number.isInteger(v) && v >= 1 && v <= 100000,
          "1 – 100000");
        options = {
          temperature: read(temperature, w.temperature, (v) => Number.isFinite(v) && v > 0, "> 0"),
          topK: read(topK, w.top_k, (v) => Number.isInteger(v) && v >= 0, "≥ 0"),
          seed: read(seed, w.seed, (v) => Number.isInteger(v) && v >= 0 && v <= page.seed_max,
            `0 – ${page.seed_max}`),
          withAttention: true,
        };
      } catch (error) {
        // The text of an earlier run would read as this one's: it goes.
        output.textContent = "";
        progress.textContent = error.message;
        return;
      }
      const run = await api.build();
      stopped = false;
      go.disabled = true;
      stop.disabled = false;
      output.textContent = prompt.value;
      const started = performance.now();
      let written = 0, last = null, shownAt = 0;
      const tokens = run.tokens(prompt.value, n, options);
      // A slice of characters, then a pause for the page to draw them: the
      // text appears as it is written, and Stop is heard between slices.
      while (!stopped) {
        const slice = performance.now();
        let step;
        while (!(step = tokens.next()).done) {
          last = step.value;
          output.textContent += run.model.vocab[last.id];
          written++;
          if (performance.now() - slice > 40) break;
        }
        progress.textContent = fill(w.writing, { n: written, total: n });
        if (follow.checked && last && performance.now() - shownAt > 250) {
          // The position that drew the newest character reads its window
          // (redrawn a few times a second: drawing costs more than writing).
          shownAt = performance.now();
          const chars = [...last.window.map((i) => run.model.vocab[i]), run.model.vocab[last.id]];
          const t = chars.length - 2, rows = last.rows;
          setText(chars.slice(0, -1), (l, h, q) => (q === t ? rows[l][h] : null), t);
        }
        if (step.done) break;
        await new Promise((done) => setTimeout(done, 0));
      }
      const seconds = (performance.now() - started) / 1000;
      progress.textContent = stopped
        ? fill(w.stopped, { n: written })
        : fill(w.done, { n: written, s: seconds.toFixed(1),
          rate: Math.round(written / seconds) });
      go.disabled = false;
      stop.disabled = true;
      if (follow.checked && last) {
        // Now every character of that window can be the query.
        const newest = [...last.window, last.id].slice(-M);
        text.value = newest.map((i) => run.model.vocab[i]).join("");
        await explore();
        view.query = view.chars.length - 1;
        draw();
      }
    });

    box.append(explorer, generation);
    explore();
    return explorer;
  };
})();
