// Sample browser. Model output and item text are untrusted: they only ever reach the page through textContent.
(function () {
  "use strict";
  var PAGE = 50;
  var LABELS = { correct: "correct", partial: "partial", wrong: "wrong", no_answer: "no answer", error: "error", unscored: "unscored" };
  var list = document.getElementById("sb-list");
  var countEl = document.getElementById("sb-count");
  var pageEl = document.getElementById("sb-page");
  var prevBtn = document.getElementById("sb-prev");
  var nextBtn = document.getElementById("sb-next");
  var runSel = document.getElementById("sb-run");
  var catSel = document.getElementById("sb-cat");
  var search = document.getElementById("sb-q");
  var chips = Array.prototype.slice.call(document.querySelectorAll(".chip[data-outcome]"));
  var state = { outcome: "all", run: "", cat: "", q: "", page: 0 };
  var data = null;
  var shown = [];

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function inflate(b64) {
    var bin = atob(b64);
    var bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  function load() {
    var raw = JSON.parse(document.getElementById("proctor-data").textContent);
    if (raw.gz === undefined) return Promise.resolve(raw);
    if (typeof DecompressionStream === "undefined") return Promise.reject(new Error("this browser cannot inflate the embedded samples"));
    return inflate(raw.gz).then(JSON.parse);
  }

  function promptParts(s) {
    return s.p.map(function (m) {
      return { role: m[0], text: m[1].map(function (i) { return data.strings[i]; }).join("\n\n") };
    });
  }

  function haystack(s) {
    if (s._h === undefined) {
      var parts = [s.id, s.c, s.x || "", s.out, s.e || "", s.ref, s.j ? s.j.r || "" : ""];
      promptParts(s).forEach(function (m) { parts.push(m.text); });
      if (s.t) s.t.turns.forEach(function (t) {
        if (t.tx) parts.push(t.tx[0]);
        t.calls.forEach(function (c) { parts.push(c.n); if (c.a) parts.push(c.a[0]); if (c.r && c.r.x) parts.push(c.r.x[0]); });
      });
      s._h = parts.join("\n").toLowerCase();
    }
    return s._h;
  }

  function matchesBase(s) {
    if (state.run !== "" && String(s.r) !== state.run) return false;
    if (state.cat !== "" && s.c !== state.cat) return false;
    if (state.q !== "" && haystack(s).indexOf(state.q) < 0) return false;
    return true;
  }

  function apply() {
    var counts = { all: 0 };
    shown = [];
    for (var i = 0; i < data.samples.length; i++) {
      var s = data.samples[i];
      if (!matchesBase(s)) continue;
      counts.all++;
      counts[s.o] = (counts[s.o] || 0) + 1;
      if (state.outcome === "all" || s.o === state.outcome) shown.push(s);
    }
    chips.forEach(function (c) {
      c.querySelector("b").textContent = String(counts[c.dataset.outcome] || 0);
    });
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    render(pages);
  }

  function fmt(v) {
    return v === null || v === undefined || v === "" ? "—" : String(v);
  }

  function detail(s) {
    var d = el("div", "detail");
    var facts = el("div", "facts");
    [
      ["run", data.runs[s.r]], ["sample", s.id], ["category", s.c], ["reference", s.ref], ["extracted", s.x],
      ["rule", s.rule], ["score", s.s], ["difficulty", s.d],
      ["tokens", fmt(s.tok[0]) + " in / " + fmt(s.tok[1]) + " out"],
      ["latency", s.lat === null || s.lat === undefined ? null : s.lat.toFixed(2) + " s"]
    ].forEach(function (kv) {
      var f = el("span");
      f.appendChild(el("b", null, kv[0]));
      f.appendChild(document.createTextNode(fmt(kv[1])));
      facts.appendChild(f);
    });
    d.appendChild(facts);
    if (s.e) { d.appendChild(el("h5", null, "Error")); d.appendChild(el("pre", null, s.e)); }
    d.appendChild(el("h5", null, "Prompt"));
    var pre = el("pre");
    promptParts(s).forEach(function (m) {
      if (m.role) pre.appendChild(el("div", "role", m.role));
      pre.appendChild(el("div", null, m.text));
    });
    d.appendChild(pre);
    if (s.reason) { d.appendChild(el("h5", null, "Reasoning")); d.appendChild(el("pre", null, s.reason)); }
    if (s.lp) d.appendChild(options(s.lp));
    if (s.t) d.appendChild(trajectory(s.t));
    d.appendChild(el("h5", null, "Raw output"));
    d.appendChild(el("pre", "raw", s.out || "(none)"));
    if (s.j) d.appendChild(verdict("Judge verdict", s.j, null));
    if (s.jc) d.appendChild(verdict("Judge check (for agreement only; exact match scored this sample)", s.jc, s.jc.o));
    return d;
  }

  function options(lp) {
    // Each option's log-probability and probability (the softmax over the options the run scored); flags: 1 chosen, 2 expected.
    var box = el("div", "options");
    box.appendChild(el("h5", null, "Options (log-probability, probability)"));
    var table = el("table", "lp");
    var head = el("tr");
    ["option", "logp", "p", ""].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    lp.forEach(function (o) {
      var tr = el("tr", (o[3] & 1 ? "chosen" : "") + (o[3] & 2 ? " expected" : ""));
      tr.appendChild(el("td", null, o[0]));
      tr.appendChild(el("td", "num", o[1] === null ? "—" : o[1].toFixed(2).replace("-", "\u2212")));
      tr.appendChild(el("td", "num", o[2] === null ? "—" : (100 * o[2]).toFixed(1) + "%"));
      tr.appendChild(el("td", null, [o[3] & 1 ? "chosen" : "", o[3] & 2 ? "expected" : ""].filter(Boolean).join(", ")));
      table.appendChild(tr);
    });
    box.appendChild(table);
    return box;
  }

  var STOPS = { answered: "answered", called: "called (its calls are the answer)", max_turns: "stopped at the turn limit",
    max_tool_calls: "stopped at the tool-call limit", max_tokens: "stopped at the token limit",
    wall_time: "stopped at the wall-time limit", model_error: "the model's request failed" };

  function bytes(n) {
    if (n < 1024) return n + " B";
    if (n < 1048576) return (n / 1024).toFixed(1) + " KB";
    return (n / 1048576).toFixed(1) + " MB";
  }

  function secs(v) { return v === null || v === undefined ? "—" : v.toFixed(2) + " s"; }

  function block(cls, c, empty) {
    // A text of the trajectory ([text] or [its head, characters cut]) as a <pre>, saying where it was cut.
    var shown = c && c[0] !== "";
    var pre = el("pre", cls, shown ? c[0] : c && c.length > 1 ? "" : empty);
    if (c && c.length > 1) {
      var n = c[1].toLocaleString("en");
      pre.appendChild(el("span", "cut", shown ? "\n… cut here: " + n + " more characters in the run's samples.jsonl"
        : "not shown (this sample's share of the page is spent): " + n + " characters in the run's samples.jsonl"));
    }
    return pre;
  }

  function fact(parent, name, value) {
    var f = el("span");
    f.appendChild(el("b", null, name));
    f.appendChild(document.createTextNode(fmt(value)));
    parent.appendChild(f);
  }

  function toolCall(c) {
    var box = el("div", "call");
    var head = el("div", "call-h");
    head.appendChild(el("code", "fn", c.n === "" ? "(no name)" : c.n));
    if (c.id) head.appendChild(el("span", "muted", "id " + c.id));
    box.appendChild(head);
    if (c.a) box.appendChild(block("args", c.a, "(no arguments)"));
    if (c.r) {
      var r = c.r;
      var rh = el("div", "res-h");
      rh.appendChild(el("span", "badge st-" + r.st, r.st.replace(/_/g, " ")));
      rh.appendChild(el("span", null, "result " + bytes(r.b)));
      if (r.tr) rh.appendChild(el("span", "flag", "truncated (cut at the agent's max_result_bytes)"));
      rh.appendChild(el("span", "muted", secs(r.w)));
      box.appendChild(rh);
      box.appendChild(block("res", r.x, "(empty result)"));
    } else box.appendChild(el("div", "res-h muted", "no result recorded"));
    return box;
  }

  function turn(t) {
    var li = el("li", "turn");
    var head = el("div", "turn-h");
    head.appendChild(el("b", null, "Turn " + (t.i + 1)));
    head.appendChild(el("span", "muted", "at " + secs(t.at)));
    head.appendChild(el("span", null, "latency " + secs(t.lat)));
    head.appendChild(el("span", null, fmt(t.tok[0]) + " in / " + fmt(t.tok[1]) + " out"));
    if (t.fr) head.appendChild(el("span", "muted", "finish " + t.fr));
    if (t.c) head.appendChild(el("span", "flag", "cached"));
    li.appendChild(head);
    if (t.err) li.appendChild(el("pre", "err", t.err));
    if (t.rs) { li.appendChild(el("div", "role", "reasoning")); li.appendChild(block("rs", t.rs, "")); }
    if (t.tx && t.tx[0] !== "") li.appendChild(block("say", t.tx, ""));
    else if (!t.calls.length && !t.err) li.appendChild(el("div", "muted", "(no text)"));
    t.calls.forEach(function (c) { li.appendChild(toolCall(c)); });
    if (t.more) li.appendChild(el("div", "more", t.more + " more calls in this turn (in the run's samples.jsonl)"));
    return li;
  }

  function trajectory(t) {
    var box = el("div", "traj");
    box.appendChild(el("h5", null, "Trajectory"));
    var facts = el("div", "facts");
    var st = el("span");
    st.appendChild(el("b", null, "ended"));
    st.appendChild(el("span", "badge stop-" + (t.stop || "none"), t.stop ? STOPS[t.stop] || t.stop : "still running"));
    if (t.sd) st.appendChild(document.createTextNode(" (" + t.sd + ")"));
    facts.appendChild(st);
    fact(facts, "turns", t.n);
    fact(facts, "tool calls", t.calls);
    fact(facts, "tokens", t.tok[0] + " in / " + t.tok[1] + " out");
    fact(facts, "wall", secs(t.w));
    if (t.tools.length) fact(facts, "tools", t.tools.join(", "));
    box.appendChild(facts);
    var ol = el("ol", "turns");
    t.turns.forEach(function (x, k) {
      if (t.gap && k === t.gap[0]) ol.appendChild(el("li", "gap", "… " + t.gap[1] + " more turns (turns " + (k + 1) + "–" + (k + t.gap[1]) + ") in the run's samples.jsonl …"));
      ol.appendChild(turn(x));
    });
    box.appendChild(ol);
    return box;
  }

  function verdict(title, v, outcome) {
    var box = el("div", "verdict");
    box.appendChild(el("h5", null, title));
    var line = el("div", "facts");
    if (v.g) { var g = el("span"); g.appendChild(el("b", null, "grade")); g.appendChild(el("span", "badge grade", v.g)); line.appendChild(g); }
    if (outcome) {
      var o = el("span");
      o.appendChild(el("b", null, "judge says"));
      o.appendChild(el("span", "badge o-" + outcome, LABELS[outcome] || outcome));
      line.appendChild(o);
    }
    if (line.childNodes.length) box.appendChild(line);
    if (v.r) box.appendChild(el("pre", "judge-reason", v.r));
    if (v.t) { box.appendChild(el("h5", null, "Judge thinking")); box.appendChild(el("pre", null, v.t)); }
    return box;
  }

  function snippet(s) {
    // What the row shows: the error, else the model's output, else (log-likelihood runs) the option it chose,
    // else (other probability runs) the prompt, labelled.
    var kind = s.e ? "err" : s.out ? "out" : s.ch ? "ch" : s.tc ? "tc" : "q";
    var span = el("span", "snip " + kind);
    if (kind === "q") span.appendChild(el("b", "tag", "prompt"));
    if (kind === "ch") span.appendChild(el("b", "tag", "chose"));
    if (kind === "tc") span.appendChild(el("b", "tag", "calls"));
    if (kind === "err") span.appendChild(el("b", "tag", "error"));
    span.appendChild(document.createTextNode((s.e || s.out || s.ch || s.tc || s.q || "").replace(/\s+/g, " ").slice(0, 220)));
    return span;
  }

  function markScrolling() {
    // A table wider than its box scrolls sideways: say so (a cue under it), and keep it up to date on resize.
    document.querySelectorAll("[data-scroll-cue]").forEach(function (box) {
      box.classList.toggle("scrolls", box.scrollWidth > box.clientWidth + 1);
    });
  }
  window.addEventListener("resize", markScrolling);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", markScrolling); else markScrolling();

  function row(s) {
    var r = el("div", "row");
    r.setAttribute("role", "button");
    r.tabIndex = 0;
    var b = el("span", "out");
    b.appendChild(el("span", "badge o-" + s.o, LABELS[s.o] || s.o));
    r.appendChild(b);
    var id = el("span", "id");
    id.appendChild(el("i", "sw s" + (s.r % (data.colours || 8))));  // the run's colour: which model, even where the model column is hidden
    id.appendChild(document.createTextNode(s.id));
    id.title = data.runs[s.r];
    r.appendChild(id);
    var model = el("span", "model", (data.models || data.runs)[s.r]);
    model.title = data.runs[s.r];
    r.appendChild(model);
    r.appendChild(el("span", "cat", s.c));
    r.appendChild(snippet(s));
    r.appendChild(el("span", "ref", s.ref === null || s.ref === undefined || s.ref === "" ? "—" : String(s.ref)));
    r.appendChild(el("span", "ans", s.x === null || s.x === undefined ? "∅" : s.x));
    r.addEventListener("click", function () { toggle(r, s); });
    r.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(r, s); } });
    return r;
  }

  function toggle(r, s) {
    var next = r.nextSibling;
    if (next && next.classList && next.classList.contains("detail")) { next.remove(); return; }
    r.parentNode.insertBefore(detail(s), r.nextSibling);
  }

  function render(pages) {
    var start = state.page * PAGE;
    var end = Math.min(shown.length, start + PAGE);
    var frag = document.createDocumentFragment();
    for (var i = start; i < end; i++) frag.appendChild(row(shown[i]));
    if (!shown.length) frag.appendChild(el("div", "empty", "No samples match."));
    list.replaceChildren(frag);
    countEl.textContent = shown.length
      ? "Showing " + (start + 1) + "–" + end + " of " + shown.length + " samples"
      : "Showing 0 of 0 samples";
    pageEl.textContent = "page " + (state.page + 1) + " / " + pages;
    prevBtn.disabled = state.page === 0;
    nextBtn.disabled = state.page >= pages - 1;
    list.dataset.count = String(shown.length);
    list.dataset.ready = "1";
  }

  function setup(d) {
    data = d;
    var totals = {};
    var cats = {};
    data.samples.forEach(function (s) { totals[s.o] = (totals[s.o] || 0) + 1; cats[s.c] = true; });
    chips.forEach(function (c) {
      var o = c.dataset.outcome;
      if ((o === "partial" || o === "unscored") && !totals[o]) c.hidden = true;
      c.addEventListener("click", function () {
        state.outcome = o;
        state.page = 0;
        chips.forEach(function (x) { x.classList.toggle("active", x === c); });
        apply();
      });
    });
    data.runs.forEach(function (label, i) { var o = el("option", null, label); o.value = String(i); runSel.appendChild(o); });
    if (data.runs.length < 2) runSel.hidden = true;
    Object.keys(cats).sort().forEach(function (c) { if (c) { var o = el("option", null, c); o.value = c; catSel.appendChild(o); } });
    runSel.addEventListener("change", function () { state.run = runSel.value; state.page = 0; apply(); });
    catSel.addEventListener("change", function () { state.cat = catSel.value; state.page = 0; apply(); });
    var timer = 0;
    search.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () { state.q = search.value.trim().toLowerCase(); state.page = 0; apply(); }, 160);
    });
    prevBtn.addEventListener("click", function () { if (state.page > 0) { state.page--; apply(); } });
    nextBtn.addEventListener("click", function () { state.page++; apply(); });
    apply();
  }

  load().then(setup, function (err) {
    countEl.textContent = "Could not load the samples: " + err.message;
    list.dataset.ready = "error";
  });
})();
