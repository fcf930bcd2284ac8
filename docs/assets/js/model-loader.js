// The trained model in the page, loaded only when the reader asks for it.
//
// Every page loads this small script; it fetches nothing by itself. It
// defines `window.literateModel`, for the page's widgets, tests and curious
// readers (in the browser's console):
//
//   await literateModel.load()          // fetch and build the model once:
//                                       // {parameters, bytes, context, vocab}
//   await literateModel.generate("ROMEO:", 200, {topK: 1})
//       // the 200 characters that follow, drawn as generate.py's `generate`
//       // draws them; options temperature (1), topK (0 = all), seed (0),
//       // with its defaults. Only topK 1 is expected to equal Python's text:
//       // the page's random numbers are not PyTorch's.
//   await literateModel.attention("ROMEO:\nIs the day")
//       // every head's weights, [L][H][S][S], as attention_maps in Python
//
// On a page whose example hands it the data "model" (chapter 5), a button
// in place of that data opens the explorer and the generation box
// (model-ui.js), which load the weights then.
(function () {
  "use strict";
  const here = document.currentScript ? document.currentScript.src : location.href;
  const asset = (path) => new URL(`../${path}`, here).href; // beside assets/js/

  function script(src) {
    return new Promise((done, fail) => {
      const tag = document.createElement("script");
      tag.src = src;
      tag.onload = done;
      tag.onerror = () => fail(new Error(`could not load ${src}`));
      document.head.append(tag);
    });
  }

  // model.json and model.bin (trainkit/web_model.py). A page read from disk
  // (file://) may not fetch, but may run a script: model.js holds the same
  // header and bytes, and hands them over by calling literateModelFiles.
  async function files() {
    if (location.protocol === "file:") {
      const handed = new Promise((done) => {
        window.literateModelFiles = (header, packed) => {
          const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
          done({ header, buffer: bytes.buffer });
        };
      });
      await script(asset("model/model.js"));
      return handed;
    }
    const got = async (name, read) => {
      const response = await fetch(asset(`model/${name}`));
      if (!response.ok) throw new Error(`model/${name}: HTTP ${response.status}`);
      return read(response);
    };
    const [header, buffer] = await Promise.all([
      got("model.json", (r) => r.json()),
      got("model.bin", (r) => r.arrayBuffer()),
    ]);
    return { header, buffer };
  }

  let built = null; // a promise of the model, made once
  function build() {
    if (!built) {
      built = (async () => {
        await script(asset("js/model.js"));
        const { header, buffer } = await files();
        if (header.format !== "literate-char-transformer" || header.version !== 1) {
          throw new Error(`model.json: unknown format ${header.format} ${header.version}`);
        }
        return window.literateModelBuild(header, buffer);
      })();
      built.catch(() => { built = null; }); // a failed load may be retried
    }
    return built;
  }

  window.literateModel = {
    async load() {
      const { model } = await build();
      const parameters = model.header.tensors.reduce((n, t) => n + t.length, 0);
      return { parameters, bytes: 4 * parameters, context: model.M,
        vocab: model.vocab.join("") };
    },
    async generate(prompt, count, options = {}) {
      const run = await build();
      let text = "";
      for (const { id } of run.tokens(prompt, count, options)) text += run.model.vocab[id];
      return text;
    },
    async attention(text) {
      return (await build()).attention(text);
    },
    build, // for model-ui.js: the model and its generator of tokens
  };

  // The widgets' place: where the page's example left its data.
  function start() {
    const data = document.querySelector('script.lit-data[data-name="model"]');
    if (!data) return;
    const page = JSON.parse(data.textContent);
    const words = page.words;
    const open = document.createElement("button");
    open.type = "button";
    open.className = "md-button lit-model-open";
    open.textContent = words.open.replace("{mb}", (page.bytes / 1e6).toFixed(1));
    const status = document.createElement("p");
    status.className = "lit-model-status";
    status.setAttribute("role", "status");
    const box = document.createElement("div");
    box.className = "lit-model";
    box.append(open, status);
    data.after(box);
    open.addEventListener("click", async () => {
      const hadFocus = document.activeElement === open;
      open.disabled = true;
      status.textContent = words.loading;
      const started = performance.now();
      try {
        await Promise.all([build(), script(asset("js/model-ui.js"))]);
        const ms = Math.round(performance.now() - started);
        const explorer = window.literateModelUI(box, page, window.literateModel);
        status.textContent = words.loaded
          .replace("{mb}", (page.bytes / 1e6).toFixed(1)).replace("{ms}", ms);
        // The button goes; the keyboard's focus, unless the reader moved it
        // meanwhile, goes on to what it opened.
        const still = [open, document.body, null].includes(document.activeElement);
        open.remove();
        if (hadFocus && still) explorer.focus();
      } catch (error) {
        status.textContent = words.failed.replace("{error}", error.message);
        open.disabled = false;
        if (hadFocus) open.focus();
      }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
