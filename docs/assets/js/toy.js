/* The four-token widget of the attention page (attention.py, "Attention on
   four tokens"): the reader changes one query's two features and the
   scores, the scaled scores, the weights with their row sums (coloured as
   in the page's heatmap) and the output A V follow. The queries are shown
   as they are now, the keys (which the widget does not change) beside them.

   The numbers, colours and words come from the page itself: the example
   `toy_widget()` hands them over as
   <script type="application/json" class="lit-data" data-name="toy">
   (see literate/data.py), in the page's language. On a page without that
   element this script does nothing. Without JavaScript the page's own
   tables and figure are all there is.

   For tests and curious readers, window.literateToy:
     literateToy.set(i, [noun, action])   set query i (within the controls'
                                          range), select it, redraw
     literateToy.reset()                  the page's queries again
     literateToy.queries()                [S][2], as now
     literateToy.scores()                 Q K^T, [S][S]
     literateToy.scaled()                 Q K^T / sqrt(d_k), [S][S]
     literateToy.weights()                softmax(Q K^T / sqrt(d_k)), [S][S]
     literateToy.output()                 weights @ V, [S][3]
*/
(function () {
  "use strict";
  var source = document.querySelector('script.lit-data[data-name="toy"]');
  if (!source || window.literateToy) return;
  var data = JSON.parse(source.textContent);
  var words = data.words;
  var labels = data.labels;
  var low = data.range[0], high = data.range[1], step = data.range[2];
  var queries = copy(data.queries);
  var chosen = 0;

  function copy(rows) {
    return rows.map(function (row) { return row.slice(); });
  }

  // ---- the steps of toy_weights, in double precision ----------------------

  function matmul(a, b) {  // [n][m] @ [m][p]
    return a.map(function (row) {
      return b[0].map(function (_, j) {
        return row.reduce(function (s, x, k) { return s + x * b[k][j]; }, 0);
      });
    });
  }

  function transpose(a) {
    return a[0].map(function (_, j) {
      return a.map(function (row) { return row[j]; });
    });
  }

  function scores() { return matmul(queries, transpose(data.keys)); }

  function scaled() {  // Q K^T / sqrt(d_k): what the softmax takes
    var scale = Math.sqrt(data.d_k);
    return scores().map(function (row) {
      return row.map(function (s) { return s / scale; });
    });
  }

  function weights() {
    return scaled().map(function (row) {
      var top = Math.max.apply(null, row);  // e^(s - max): no overflow
      var e = row.map(function (s) { return Math.exp(s - top); });
      var sum = e.reduce(function (a, b) { return a + b; }, 0);
      return e.map(function (x) { return x / sum; });
    });
  }

  function output() { return matmul(weights(), data.values); }

  // ---- colours: the page's colour map, and the more legible ink on it -----

  function rgb(hex) {
    return [1, 3, 5].map(function (i) { return parseInt(hex.substr(i, 2), 16); });
  }

  var stops = data.colours.map(rgb);

  function colour(w) {
    var x = Math.min(Math.max(w, 0), 1) * (stops.length - 1);
    var i = Math.min(Math.floor(x), stops.length - 2), t = x - i;
    var c = stops[i].map(function (v, n) {
      return Math.round(v + (stops[i + 1][n] - v) * t);
    });
    return "rgb(" + c.join(",") + ")";
  }

  function luminance(c) {  // WCAG's relative luminance of an "rgb(r,g,b)"
    var v = c.match(/\d+/g).map(function (s) {
      var x = s / 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  }

  function ink(c) {  // black or white, whichever contrasts more (>= 4.5:1)
    var l = luminance(c);
    return (l + 0.05) / 0.05 > 1.05 / (l + 0.05) ? "#000" : "#fff";
  }

  // ---- the widget's elements -----------------------------------------------

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function say(template, fields) {
    return template.replace(/\{(\w+)\}/g, function (m, k) {
      return k in fields ? fields[k] : m;
    });
  }

  function number(x) {
    return (Math.abs(x) < 0.005 ? 0 : x).toFixed(2);
  }

  var root = el("div",
    { "class": "lit-toy", role: "group", "aria-labelledby": "lit-toy-title" });
  root.appendChild(
    el("p", { "class": "lit-toy-title", id: "lit-toy-title" }, [labels.title]));

  var picks = words.map(function (word, i) {
    var b = el("button", { type: "button", "aria-pressed": "false" }, [word]);
    b.addEventListener("click", function () { choose(i); });
    return b;
  });
  root.appendChild(el("div",
    { "class": "lit-toy-pick", role: "group", "aria-label": labels.pick },
    [el("span", { "aria-hidden": "true" }, [labels.pick])].concat(picks)));

  var controls = data.controls.map(function (feature, f) {
    var limits = { min: low, max: high, step: step };
    var slider = el("input",
      Object.assign({ type: "range", id: "lit-toy-f" + f }, limits));
    var box = el("input",
      Object.assign({ type: "number", "class": "lit-toy-number" }, limits));
    var name = el("label", { "for": "lit-toy-f" + f }, [feature]);
    slider.addEventListener("input", function () { change(f, +slider.value); });
    box.addEventListener("input", function () {
      if (box.value !== "" && isFinite(+box.value)) change(f, +box.value);
    });
    box.addEventListener("change", function () { change(f, +box.value || 0); });
    root.appendChild(el("div", { "class": "lit-toy-feature" }, [name, slider, box]));
    return { feature: feature, slider: slider, box: box };
  });

  var reset = el("button",
    { type: "button", "class": "lit-toy-reset" }, [labels.reset]);
  reset.addEventListener("click", function () { api.reset(); });
  root.appendChild(reset);

  // What goes in (the queries as now, the keys as the page has them), then
  // each step of toy_weights and the output.
  var inputs = el("div", { "class": "lit-toy-tables" });
  var tables = el("div", { "class": "lit-toy-tables" });
  root.appendChild(inputs);
  root.appendChild(tables);
  var bar = "linear-gradient(to right, " + data.colours.join(", ") + ")";
  root.appendChild(el("p", { "class": "lit-toy-legend" }, [
    el("span", {}, ["0"]),
    el("span",
      { "class": "lit-toy-bar", style: "background:" + bar, "aria-hidden": "true" }),
    el("span", {}, ["1"]),
    el("span", {}, [labels.weight]),
  ]));

  // A table with a row per word; `mark` underlines the chosen query's row.
  function table(caption, columns, rows, cell, mark) {
    var head = el("tr", {}, [el("td")].concat(columns.map(function (c) {
      return el("th", { scope: "col" }, [c]);
    })));
    var body = rows.map(function (row, i) {
      var tr = el("tr", mark && i === chosen ? { "class": "lit-toy-chosen" } : {},
        [el("th", { scope: "row" }, [words[i]])]);
      row.forEach(function (x, j) { tr.appendChild(cell(x, i, j)); });
      return tr;
    });
    // A class of its own: the theme's look for tables (wide cells) is for
    // tables without one.
    return el("table", { "class": "lit-toy-table" }, [el("caption", {}, [caption]),
      el("thead", {}, [head]),
      el("tbody", {}, body)]);
  }

  function plain(x) { return el("td", {}, [number(x)]); }

  function heat(x, i, j) {
    if (j === words.length) return plain(x);  // the row sum
    var c = colour(x);
    var style = "background:" + c + ";color:" + ink(c);
    return el("td", { "class": "lit-toy-heat", style: style }, [number(x)]);
  }

  function draw() {
    var w = weights();
    var withSums = w.map(function (row) {
      return row.concat([row.reduce(function (a, b) { return a + b; }, 0)]);
    });
    inputs.replaceChildren(
      table(labels.queries, data.features, queries, plain, true),
      table(labels.keys, data.features, data.keys, plain, false)
    );
    tables.replaceChildren(
      table(labels.scores, words, scores(), plain, true),
      table(say(labels.scaled, { d_k: data.d_k }), words, scaled(), plain, true),
      table(labels.weights, words.concat([labels.sum]), withSums, heat, true),
      table(labels.output, data.classes, output(), plain, true)
    );
    picks.forEach(function (b, i) {
      b.setAttribute("aria-pressed", String(i === chosen));
    });
    controls.forEach(function (c, f) {
      var name = say(labels.feature, { feature: c.feature, word: words[chosen] });
      c.slider.setAttribute("aria-label", name);
      c.box.setAttribute("aria-label", name);
      c.slider.value = queries[chosen][f];
      // What the reader is typing stays as typed while it means the value.
      if (c.box !== document.activeElement || +c.box.value !== queries[chosen][f]) {
        c.box.value = number(queries[chosen][f]);
      }
    });
  }

  function clamp(x) {
    return Math.min(Math.max(x, low), high);
  }

  function change(f, value) {
    queries[chosen][f] = clamp(value);
    draw();
  }

  function choose(i) {
    chosen = i;
    draw();
  }

  var api = {
    set: function (i, features) {
      if (!(i >= 0 && i < words.length) || features.length !== data.features.length) {
        throw new RangeError("literateToy.set(i, [noun, action]): i from 0 to " +
          (words.length - 1));
      }
      chosen = i;
      queries[i] = features.map(function (x) { return clamp(Number(x)); });
      draw();
    },
    reset: function () { queries = copy(data.queries); draw(); },
    queries: function () { return copy(queries); },
    scores: scores,
    scaled: scaled,
    weights: weights,
    output: output,
  };

  source.parentNode.insertBefore(root, source.nextSibling);
  draw();
  window.literateToy = api;
})();
