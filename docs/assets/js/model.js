// Chapter 4's model, run in the browser: the same forward pass as
// `CharTransformer` (train.py) with its key/value caches (`KVCache`, mha.py),
// and the same sampling loop as `generate` (generate.py), written with plain
// loops over Float32Arrays. No library, no WebAssembly: the whole model is
// about 0.8 M multiply-adds a character, a millisecond or so of JavaScript.
//
// The weights come from `model.bin` and its header `model.json`, written by
// trainkit/web_model.py (the format is described there). model-loader.js
// fetches them when the reader asks, then calls `literateModelBuild`.
//
// Letters as in the chapters: L blocks, H heads, D = d_model, Dk = D / H,
// M = context (the window), N characters in the vocabulary, F = 4 D.
(function () {
  "use strict";

  function build(header, buffer) {
    const all = new Float32Array(buffer);
    const tensor = {};
    for (const t of header.tensors) {
      tensor[t.name] = all.subarray(t.offset, t.offset + t.length);
    }
    const need = (name) => {
      if (!tensor[name]) throw new Error(`model.json: no tensor ${name}`);
      return tensor[name];
    };
    const L = header.n_layer, H = header.n_head, D = header.d_model;
    const M = header.context, Dk = D / H, eps = header.eps;
    const vocab = [...header.vocab], N = vocab.length;
    const token = need("token.weight"); // [N, D], also the output layer (tied)
    const position = need("position.weight"); // [M, D]
    const blocks = [];
    for (let l = 0; l < L; l++) {
      const w = (part) => need(`blocks.${l}.${part}`);
      blocks.push({
        ln1: [w("ln1.weight"), w("ln1.bias")],
        query: [w("attn.query.linear.weight"), w("attn.query.linear.bias")],
        key: [w("attn.key.linear.weight"), w("attn.key.linear.bias")],
        value: [w("attn.value.linear.weight"), w("attn.value.linear.bias")],
        output: [w("attn.output.weight"), w("attn.output.bias")],
        ln2: [w("ln2.weight"), w("ln2.bias")],
        widen: [w("ffn.0.weight"), w("ffn.0.bias")], // [F, D], [F]
        narrow: [w("ffn.2.weight"), w("ffn.2.bias")], // [D, F], [D]
      });
    }
    const F = blocks[0].widen[1].length;
    const lnF = [need("ln_f.weight"), need("ln_f.bias")];
    if (D % 4 || F % 4) throw new Error("model.json: D and F must be multiples of 4");
    if (header.approximate !== "none") {
      throw new Error(`model.json: GELU "${header.approximate}" is not supported`);
    }

    // nn.Linear on `S` rows: out = X W^T + b, with X [S, nIn] and W stored
    // [nOut, nIn], so each output is one row of W dotted with a row of X.
    // Blocked for speed, the same sums: four rows of W at a time, each
    // number read once for two rows of X (eight sums), and those four rows
    // of W (a few kB) stay in the processor's cache while every row of X
    // passes. A whole block of positions (the prompt, a re-encoding) then
    // costs far less than the same positions one at a time.
    function linear(out, [W, b], X, S, nOut, nIn) {
      for (let j = 0; j < nOut; j += 4) {
        const w0 = j * nIn, w1 = w0 + nIn, w2 = w1 + nIn, w3 = w2 + nIn;
        let r = 0;
        for (; r + 1 < S; r += 2) {
          const xa = r * nIn, xb = xa + nIn;
          let a0 = 0, a1 = 0, a2 = 0, a3 = 0, b0 = 0, b1 = 0, b2 = 0, b3 = 0;
          for (let i = 0; i < nIn; i++) {
            const x0 = X[xa + i], x1 = X[xb + i];
            const v0 = W[w0 + i], v1 = W[w1 + i], v2 = W[w2 + i], v3 = W[w3 + i];
            a0 += v0 * x0; a1 += v1 * x0; a2 += v2 * x0; a3 += v3 * x0;
            b0 += v0 * x1; b1 += v1 * x1; b2 += v2 * x1; b3 += v3 * x1;
          }
          const o = r * nOut + j, o1 = o + nOut;
          out[o] = b[j] + a0; out[o + 1] = b[j + 1] + a1;
          out[o + 2] = b[j + 2] + a2; out[o + 3] = b[j + 3] + a3;
          out[o1] = b[j] + b0; out[o1 + 1] = b[j + 1] + b1;
          out[o1 + 2] = b[j + 2] + b2; out[o1 + 3] = b[j + 3] + b3;
        }
        if (r < S) { // one row left (or the only one, one new character)
          const xa = r * nIn;
          let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
          for (let i = 0; i < nIn; i++) {
            const x0 = X[xa + i];
            a0 += W[w0 + i] * x0; a1 += W[w1 + i] * x0;
            a2 += W[w2 + i] * x0; a3 += W[w3 + i] * x0;
          }
          const o = r * nOut + j;
          out[o] = b[j] + a0; out[o + 1] = b[j + 1] + a1;
          out[o + 2] = b[j + 2] + a2; out[o + 3] = b[j + 3] + a3;
        }
      }
    }

    // nn.LayerNorm over D for each of S rows: (x - mean) / sqrt(var + eps)
    // * gain + bias, with the biased variance, as PyTorch computes it.
    function layerNorm(out, X, S, [gain, bias]) {
      for (let r = 0; r < S * D; r += D) {
        let mean = 0;
        for (let i = 0; i < D; i++) mean += X[r + i];
        mean /= D;
        let variance = 0;
        for (let i = 0; i < D; i++) variance += (X[r + i] - mean) ** 2;
        const scale = 1 / Math.sqrt(variance / D + eps);
        for (let i = 0; i < D; i++) {
          out[r + i] = (X[r + i] - mean) * scale * gain[i] + bias[i];
        }
      }
    }

    // nn.GELU(): x Φ(x) = x (1 + erf(x / √2)) / 2, with erf by Abramowitz and
    // Stegun's 7.1.26, a polynomial in t = 1 / (1 + p|z|) times e^(-z²),
    // within 1.5e-7 of erf everywhere: a float32's resolution near 1, where
    // the activations are stored. Its series (exact in float64) cost a
    // quarter of each character's time, for differences the tests (greedy
    // text as Python writes it, attention to 1e-3) cannot see.
    function erf(z) {
      const a = Math.abs(z), t = 1 / (1 + 0.3275911 * a);
      const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741
        + t * (-1.453152027 + t * 1.061405429))));
      const e = 1 - poly * Math.exp(-a * a);
      return z < 0 ? -e : e;
    }
    const gelu = (x) => 0.5 * x * (1 + erf(x * Math.SQRT1_2));

    // model.new_caches(1): one KVCache per block, keys and values [H, M, Dk]
    // (batch 1), the first `length` positions filled, shared by every block.
    // Each run (a generation, an explorer's text) makes its own, so that one
    // never reads or empties another's.
    const newCaches = () => ({
      blocks: blocks.map(() => ({
        keys: new Float32Array(H * M * Dk),
        values: new Float32Array(H * M * Dk),
      })),
      length: 0,
      reset() { this.length = 0; }, // KVCache.reset, for every block
    });

    // The rows of the new positions: [S, D] (at most M of them), [S, F].
    // Scratch shared by every run: a forward pass runs start to end at once.
    const x = new Float32Array(M * D), h = new Float32Array(M * D);
    const q = new Float32Array(M * D), k = new Float32Array(M * D);
    const v = new Float32Array(M * D), y = new Float32Array(M * D);
    const out = new Float32Array(M * D), wide = new Float32Array(M * F);
    const weights = new Float64Array(M), logits = new Float32Array(N);
    const scale = 1 / Math.sqrt(Dk);

    // CharTransformer.forward(ids, caches) for S new ids, at positions
    // caches.length .. caches.length + S - 1: the logits [N] of the last one
    // (all that sampling reads). With `rows`, rows[l][h] gets, for each new
    // position t, block l's head h attention weights over positions 0..t
    // (Float32Arrays).
    function forward(ids, caches, rows) {
      const S = ids.length, start = caches.length;
      if (S === 0 || start + S > M) {
        throw new Error(`forward: positions ${start} to ${start + S - 1} do not ` +
          `fit a context of ${M}; reset the caches first`);
      }
      for (let r = 0; r < S; r++) {
        const t = start + r;
        for (let i = 0; i < D; i++) {
          x[r * D + i] = token[ids[r] * D + i] +
            (header.positions ? position[t * D + i] : 0);
        }
      }
      for (let l = 0; l < L; l++) {
        const block = blocks[l], { keys, values } = caches.blocks[l];
        // x <- x + Attention(LN1(x)): the new positions' queries, keys and
        // values; the keys and values join the cache (KVCache.append).
        layerNorm(h, x, S, block.ln1);
        linear(q, block.query, h, S, D, D);
        linear(k, block.key, h, S, D, D);
        linear(v, block.value, h, S, D, D);
        for (let r = 0; r < S; r++) {
          for (let head = 0; head < H; head++) {
            const at = (head * M + start + r) * Dk, from = r * D + head * Dk;
            for (let d = 0; d < Dk; d++) {
              keys[at + d] = k[from + d];
              values[at + d] = v[from + d];
            }
          }
        }
        // Per head: softmax(q K^T / √Dk) over the cached positions 0..t
        // (the causal mask: none after t), then the weighted sum of values.
        for (let r = 0; r < S; r++) {
          const t = start + r;
          for (let head = 0; head < H; head++) {
            const qh = r * D + head * Dk;
            let most = -Infinity;
            for (let j = 0; j <= t; j++) {
              const kj = (head * M + j) * Dk;
              let s = 0;
              for (let d = 0; d < Dk; d++) s += q[qh + d] * keys[kj + d];
              weights[j] = s * scale;
              if (weights[j] > most) most = weights[j];
            }
            let total = 0;
            for (let j = 0; j <= t; j++) {
              weights[j] = Math.exp(weights[j] - most);
              total += weights[j];
            }
            for (let d = 0; d < Dk; d++) y[qh + d] = 0;
            for (let j = 0; j <= t; j++) {
              const p = weights[j] / total, vj = (head * M + j) * Dk;
              weights[j] = p;
              for (let d = 0; d < Dk; d++) y[qh + d] += p * values[vj + d];
            }
            if (rows) rows[l][head].push(Float32Array.from(weights.subarray(0, t + 1)));
          }
        }
        linear(out, block.output, y, S, D, D); // the heads' concat times W^O
        for (let i = 0; i < S * D; i++) x[i] += out[i];
        // x <- x + FFN(LN2(x)): widen to F, GELU, back to D.
        layerNorm(h, x, S, block.ln2);
        linear(wide, block.widen, h, S, F, D);
        for (let i = 0; i < S * F; i++) wide[i] = gelu(wide[i]);
        linear(out, block.narrow, wide, S, D, F);
        for (let i = 0; i < S * D; i++) x[i] += out[i];
      }
      // The final LayerNorm of the last row, then the tied output layer:
      // logits = h E^T, E the token embedding.
      const last = (S - 1) * D;
      layerNorm(h, x.subarray(last, last + D), 1, lnF);
      for (let c = 0, row = 0; c < N; c++, row += D) {
        let s = 0;
        for (let i = 0; i < D; i++) s += token[row + i] * h[i];
        logits[c] = s;
      }
      caches.length = start + S;
      return logits;
    }

    function encode(text, what) {
      const ids = [];
      let i = 0;
      for (const c of text) {
        const id = vocab.indexOf(c);
        if (id < 0) {
          throw new Error(`${what}: the model has no character ` +
            `${JSON.stringify(c)} (character ${i + 1})`);
        }
        ids.push(id);
        i++;
      }
      return ids;
    }

    return { header, vocab, L, H, M, N, forward, newCaches, encode };
  }

  // `distribution` of generate.py: logits / T, top-k (keeping ties with the
  // k-th), softmax; then the draw `next_token` makes, with this page's own
  // generator `random` (not torch's, so only top-k 1 matches Python's text).
  function draw(logits, temperature, topK, random) {
    const n = logits.length, z = Array.from(logits, (l) => l / temperature);
    if (topK && topK < n) {
      const kth = [...z].sort((a, b) => b - a)[topK - 1];
      for (let i = 0; i < n; i++) if (z[i] < kth) z[i] = -Infinity;
    }
    const most = Math.max(...z);
    const p = z.map((zi) => Math.exp(zi - most));
    const total = p.reduce((a, b) => a + b, 0);
    let u = random() * total;
    for (let i = 0; i < n; i++) {
      u -= p[i];
      if (u < 0 && p[i] > 0) return i;
    }
    return p.findLastIndex((pi) => pi > 0);
  }

  // A seeded generator of numbers in [0, 1): a counter stepped by the golden
  // ratio's 32 bits, mixed by MurmurHash3's finaliser.
  function seeded(seed) {
    let s = seed >>> 0;
    return () => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
    };
  }

  const heads = (model) => [...Array(model.L)].map(() => [...Array(model.H)].map(() => []));

  // generate.py's `generate`: yields {id, rows} for `tokens` new ids. The
  // model sees the last `window` ids; only the `fresh` ones run, the caches
  // hold the rest. A full window restarts from its last `keep` ids at
  // positions 0, 1, ... (re-encoding at the window's edge). rows[l][h] is
  // the attention of the newest position over the window that drew it.
  function* tokens(model, prompt, count, options = {}) {
    const { temperature = 1, topK = 0, seed = 0, withAttention = false } = options;
    if (!(temperature > 0 && Number.isFinite(temperature))) {
      throw new Error(`generate: temperature must be a finite number > 0, got ${temperature}`);
    }
    if (!(Number.isInteger(topK) && topK >= 0)) {
      throw new Error(`generate: topK must be an integer >= 0, got ${topK}`);
    }
    if (!(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32)) {
      throw new Error(`generate: seed must be an integer from 0 to 2**32 - 1, got ${seed}`);
    }
    const ids = model.encode(prompt, "generate: prompt");
    if (ids.length === 0) throw new Error("generate: the prompt must not be empty");
    const M = model.M, keep = Math.max(1, Math.floor(M / 2));
    const random = seeded(seed);
    const seq = ids.slice(-M);
    let window = seq.length, fresh = seq.slice();
    const caches = model.newCaches(); // this run's own
    for (let n = 0; n < count; n++) {
      const rows = withAttention ? heads(model) : null;
      const logits = model.forward(fresh, caches, rows);
      const id = draw(logits, temperature, topK, random);
      const newest = rows && rows.map((row) => row.map((r) => r[r.length - 1]));
      yield { id, rows: newest, window: seq.slice(-window) };
      seq.push(id);
      if (window === M) {
        window = keep;
        fresh = seq.slice(-keep);
        caches.reset();
      } else {
        window += 1;
        fresh = [id];
      }
    }
  }

  // attention_maps (generate.py): every head's weights for `text`,
  // [L][H][S][S], row t being position t's weights (0 after t, masked).
  function attention(model, text) {
    const ids = model.encode(text, "attention: text");
    const S = ids.length;
    if (S === 0 || S > model.M) {
      throw new Error(`attention: the text must have 1 to ${model.M} characters, got ${S}`);
    }
    const maps = [...Array(model.L)].map(() =>
      [...Array(model.H)].map(() => [...Array(S)].map(() => new Array(S).fill(0))));
    const rows = heads(model);
    model.forward(ids, model.newCaches(), rows); // caches of its own
    for (let l = 0; l < model.L; l++) {
      for (let h = 0; h < model.H; h++) {
        for (let t = 0; t < S; t++) {
          for (let j = 0; j <= t; j++) maps[l][h][t][j] = rows[l][h][t][j];
        }
      }
    }
    return maps;
  }

  window.literateModelBuild = (header, buffer) => {
    const model = build(header, buffer);
    return {
      model,
      tokens: (prompt, count, options) => tokens(model, prompt, count, options),
      attention: (text) => attention(model, text),
    };
  };
})();
