/* mkdocs-material's search worker, with each query in Chinese or Japanese
   cut into the words of the index (the literate plugin's per_language_search).

   The index of those languages is cut into words when the site is built
   (literate/mkdocs/search_words.py); a token matches a query word that it
   starts with. The theme's worker does not cut a query the way the index
   was cut: it re-cuts each run of Han characters with a greedy search that
   never keeps the run's last character (学習率 is searched as 学習), and it
   leaves katakana as typed (因果マスク is one word, which no token of a
   split index starts with). So the page starts this script instead
   (literate-search.js?worker=<the theme's worker file>), which loads the
   theme's worker beside it and rewrites each query before the theme reads it:

   - a typed word in those scripts is split at the index's separator, then
     cut into the longest words of the index, left to right; a rest that
     starts some word of the index stays whole (the reader is still typing);
   - when one typed word gives several, each is required (`+word*`): the
     reader asked for all of them, not for any one;
   - a Han character is escaped (`\学`, which lunr reads as the character)
     so that the theme's own cutting, which looks for runs of them, passes
     the word by.

   Words in other scripts, and words with lunr's query syntax, are left as
   typed. The index is read from the theme's setup message. */
(() => {
  const SETUP = 0
  const QUERY = 2
  const theme = new URLSearchParams(self.location.search).get("worker") || ""
  if (!/^[\w-]+(\.[\w-]+)*\.js$/.test(theme))
    throw new Error(
      `literate-search.js: worker=${theme}: expected the file name of the ` +
      "theme's search worker, beside this script")

  const CJK = /[\u3005-\u3007\u3041-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/
  const HAN = /[\u3005-\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/g
  const SCRIPTS = new RegExp(`${CJK.source}+|(?:(?!${CJK.source}).)+`, "g")
  const SYNTAX = /[:^~"\\*+]|^-/
  let separator = null  // the index's, global: splits a word into pieces
  let words = []  // the index's words that hold CJK characters, sorted

  /* The index's words, from the theme's setup message (its config and docs). */
  function setup(index) {
    separator = new RegExp(index.config.separator, "g")
    const found = new Set()
    for (const doc of index.docs)
      for (const field of Object.keys(index.config.fields))
        if (typeof doc[field] === "string")
          for (const word of doc[field].replace(/<[^>]*>/g, " ").split(separator))
            if (CJK.test(word))
              found.add(word.toLowerCase())
    words = [...found].sort()
  }

  /* The first index in `words` of a word not before `prefix`. */
  function lowerBound(prefix) {
    let low = 0
    let high = words.length
    while (low < high) {
      const middle = (low + high) >> 1
      if (words[middle] < prefix) low = middle + 1
      else high = middle
    }
    return low
  }

  const isWord = word => words[lowerBound(word)] === word
  const startsWord = prefix => (words[lowerBound(prefix)] || "").startsWith(prefix)

  /* A piece (no separator in it) cut into the index's words. */
  function cut(piece) {
    const found = []
    let at = 0
    while (at < piece.length) {
      const rest = piece.slice(at)
      if (startsWord(rest)) {
        found.push(rest)
        break
      }
      let length = rest.length - 1
      while (length > 1 && !isWord(rest.slice(0, length))) length--
      if (!isWord(rest.slice(0, length))) {
        found.push(rest)  // in no word of the index: found nowhere
        break
      }
      found.push(rest.slice(0, length))
      at += length
    }
    return found
  }

  const escaped = word => word.replace(HAN, "\\$&")

  /* One typed word (no space in it), rewritten. */
  function rewriteWord(typed) {
    if (!CJK.test(typed) || SYNTAX.test(typed) || separator === null)
      return typed
    const lower = typed.toLowerCase()
    const pieces = lower.split(separator).filter(piece => piece.length)
    // The index parts a word in those scripts from the letters beside it.
    const runs = pieces.flatMap(piece => piece.match(SCRIPTS))
    const found = runs.flatMap(run => CJK.test(run) ? cut(run) : [run])
    if (found.length === 1)
      return escaped(found[0])
    return found.map(word => `+${escaped(word)}*`).join(" ")
  }

  function rewrite(query) {
    return query.split(/(\s+)/).map(
      (part, i) => i % 2 ? part : rewriteWord(part)).join("")
  }

  function seen(message) {
    if (message && message.type === SETUP) setup(message.data)
    if (message && message.type === QUERY && typeof message.data === "string")
      return { ...message, data: rewrite(message.data) }
    return message
  }

  /* The theme's worker listens with addEventListener("message", ...). */
  const listen = self.addEventListener.bind(self)
  self.addEventListener = (type, listener, options) => listen(
    type,
    type === "message" ? event => listener({ data: seen(event.data) }) : listener,
    options)
  importScripts(theme)
})()
