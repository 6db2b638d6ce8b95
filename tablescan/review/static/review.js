// tablescan review: the game page's shared core. Plain JS, no build step, no outside assets.
// The page renders everything from one JSON "view" that every API call returns afresh. What differs
// between games (board, cell names, settings, picker, keys) lives in static/games/<game>.js: each
// module registers itself with tablescan.register(id, factory) and the core asks the one for view.game.
(function () {
  "use strict";

  const modules = {}; // game id -> factory(ui) returning the game's page hooks
  const extensions = []; // page parts shared by every game (static/night.js): factory(ui) -> render(view)
  window.tablescan = { register(id, factory) { modules[id] = factory; }, extend(factory) { extensions.push(factory); } };
  let parts = [];

  let view = null;
  let game = null; // the hooks of view.game's module
  let selected = null; // {pid, cell}
  let busy = 0;
  let changes = 0; // bumped by every answer from the API; a poll started before one is stale
  let highlight = null; // {pid, id, cells: Set}: the cells that earned one scoring item
  let lastError = ""; // the API's words for the last refused request
  let sent = 0; // requests sent so far: only the newest one's answer is drawn
  let held = null; // an older answer not drawn (a newer request was on its way)
  const zooms = {}; // player id -> the photo's zoom (1: fit, a factor, or "full")
  const scrolls = {}; // player id -> [left, top] of a zoomed photo
  const ZOOM_MAX = 16;
  const MIN_LABEL_PX = 9; // a photo label smaller than this on screen is hidden (it would only clutter)
  const LABEL_EM = 0.66; // a bold label character's width, in font sizes
  const SURE = 0.99; // readings at or above this are not listed as uncertain: a clean scan lists no row of "100%" chips

  // ---------------------------------------------------------------- helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const SVG = "http://www.w3.org/2000/svg";
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    return node;
  }

  function notice(message, kind) {
    const box = document.getElementById("notice");
    if (!message) { box.hidden = true; return; }
    box.hidden = false;
    box.textContent = message;
    box.className = "notice " + (kind || "");
  }

  async function api(method, url, body) {
    const seq = ++sent;
    busy += 1;
    document.body.classList.add("busy");
    try {
      const init = { method, headers: { Accept: "application/json" } };
      if (body instanceof FormData) init.body = body;
      else if (body !== undefined) {
        init.headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(body);
      }
      const response = await fetch(url, init);
      let data = null;
      try { data = await response.json(); } catch (e) { data = { error: response.status + " " + response.statusText }; }
      if (!response.ok) {
        lastError = data.error || "request failed";
        if (seq === sent && held) { view = held; held = null; render(); } // the last good answer, held back for this one
        notice(lastError, "bad");
        return false;
      }
      changes += 1;
      // a newer edit is on its way: its answer holds this one's too, so drawing this one would only undo
      // on screen what was just chosen (e.g. a second objective picked before the first one's answer)
      if (seq !== sent) { held = data.notice || !held ? data : Object.assign(data, { notice: held.notice }); return true; }
      const said = data.notice || (held && held.notice) || ""; // a held answer's notice (a photo not read) still shows
      view = data;
      held = null;
      notice(said, said ? "warn" : "");
      render();
      return true;
    } catch (error) {
      notice("cannot reach the review server: " + error.message, "bad");
      return false;
    } finally {
      busy -= 1;
      if (!busy) document.body.classList.remove("busy");
    }
  }

  const base = () => "/api/games/" + view.id;
  const playerUrl = (pid) => base() + "/players/" + pid;
  const player = (pid) => view.players.find((p) => p.id === pid);
  const cellValue = (p, cell) => { const r = p.cells.find((c) => c.cell === cell); return r ? r.value : null; };
  const reading = (p, cell) => p.cells.find((c) => c.cell === cell) || null;

  function setCell(pid, cell, value) {
    return api("PUT", playerUrl(pid) + "/cells", { cell, value });
  }
  function patchSettings(change) { return api("PATCH", base(), { settings: change }); }
  function patchFields(pid, change) { return api("PATCH", playerUrl(pid), { fields: change }); }

  function confidenceClass(r) {
    if (!r) return "";
    if (r.source === "corrected") return "conf-corrected";
    if (r.confidence === null || r.confidence === undefined) return "";
    if (r.confidence >= 0.9) return "conf-high";
    if (r.confidence >= 0.6) return "conf-mid";
    return "conf-low";
  }

  // Send a field's new value; a refusal is shown beside the field (not only at the top), the value left as typed.
  async function fieldChange(field, input, send) {
    const ok = await send();
    for (const old of field.querySelectorAll(".field-error")) old.remove();
    if (ok === false && !field.isConnected) return; // the page was redrawn meanwhile: the error stays at the top
    if (ok === false) {
      notice("");
      input.setAttribute("aria-invalid", "true");
      // beside its field the error needs no path ("fields.favor_tokens: "): the field is right there
      field.append(el("span", { class: "field-error", role: "alert", text: lastError.replace(/^[\w.\[\]'"-]+: /, "") }));
    } else input.removeAttribute("aria-invalid");
  }

  function numberInput(label, value, onchange, attrs) {
    const field = el("label", { class: "field" }, label);
    const input = el("input", Object.assign({ type: "number", inputmode: "numeric", value: value ?? 0, min: 0,
      onchange: (e) => fieldChange(field, input, () => onchange(e.target.value)) }, attrs || {}));
    field.append(input);
    return field;
  }

  function select(label, options, value, onchange, attrs) {
    const field = el("label", { class: "field" }, label);
    const node = el("select", Object.assign({ onchange: (e) => fieldChange(field, node, () => onchange(e.target.value)) }, attrs || {}),
      options.map(([v, text]) => el("option", { value: v, selected: v === value ? true : null, text })));
    field.append(node);
    return field;
  }

  // ---------------------------------------------------------------- standings

  function flatten(entry, prefix, out) {
    for (const [key, value] of Object.entries(entry || {})) {
      if (["name", "total", "violations", view.form.score_key].includes(key) && !prefix) continue;
      if (typeof value === "number") out.push([key, value, prefix]);
      else if (value && typeof value === "object" && !Array.isArray(value)) flatten(value, key, out);
      else if (Array.isArray(value) && key === "cards") out.push(["cards", value.length, prefix]);
    }
    return out;
  }

  function renderStandings() {
    const box = document.getElementById("standings");
    box.replaceChildren();
    if (view.error) box.append(el("p", { class: "error", role: "alert" }, "Cannot score yet: " + view.error));
    const incomplete = view.incomplete || [];
    if (incomplete.length) {
      box.append(el("p", { class: "incomplete", role: "status" }, el("strong", { text: "Incomplete: " }), incomplete.join("; "),
        el("span", { class: "muted", text: " (no ranking until these are entered)" })));
    }
    if (view.report) {
      const winners = incomplete.length ? [] : [].concat(view.report.winner ?? []);
      const table = el("table", { class: "standings" },
        el("thead", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "Player" }), el("th", { class: "num", text: "Score" }), el("th", { text: "Tie-break" }))),
        el("tbody", {}, view.standings.map((row) =>
          el("tr", { class: winners.includes(row.name) ? "winner" : "" },
            el("td", { text: row.place }), el("td", { text: row.name + (winners.includes(row.name) ? " ★" : "") }),
            el("td", { class: "num score", text: row.score }), el("td", { class: "muted", text: row.note })))));
      if (!incomplete.length) box.append(table);
      box.append(...hook("summary", [], view.report));
      if (!incomplete.length && !view.standings.some((row) => row.note)) {
        for (const line of view.tie_breaks || []) box.append(el("p", { class: "muted small", text: "Tie: " + line }));
      }
      box.append(renderBreakdown());
      if (view.text) box.append(el("details", { class: "report-text" }, el("summary", { text: "Full report, explained" }), el("pre", { text: view.text })));
      box.append(...hook("notes", [], view.report));
    }
    if (view.form.several_scorings) box.append(renderRounds());
  }

  // a report key in words: the form's own label ("favor_tokens" -> "Favor tokens"), else the key spelled out
  function words(key) {
    const label = (view.form.labels || {})[key];
    if (label) return label;
    const spelled = String(key).replace(/[_-]+/g, " ");
    return spelled.charAt(0).toUpperCase() + spelled.slice(1);
  }

  function renderBreakdown() {
    const players = view.report.players || [];
    const columns = [];
    const rows = players.map((entry) => {
      const values = {};
      for (const [key, value, group] of flatten(entry, "", [])) {
        const id = (group ? group + "." : "") + key;
        if (!columns.some((c) => c.id === id)) columns.push({ id, key, group: group === "breakdown" ? "" : group });
        values[id] = value;
      }
      return { entry, values };
    });
    const wrap = el("div", { class: "scroll" });
    const head = el("tr", {}, el("th", { text: "Breakdown" }), columns.map((c) => el("th", { class: "num", text: words(c.key) })));
    const table = el("table", { class: "breakdown" },
      el("thead", {},
        el("tr", { class: "groups" }, el("th"), columns.map((c, i) => el("th", { class: "group", text: i === 0 || columns[i - 1].group !== c.group ? (c.group ? words(c.group) : "") : "" }))),
        head),
      el("tbody", {}, rows.map(({ entry, values }) => el("tr", {}, el("th", { text: entry.name }),
        columns.map((c) => el("td", { class: "num", text: values[c.id] ?? "" }))))));
    wrap.append(table);
    return wrap;
  }

  function renderRounds() {
    const round = view.settings.scoring_round || 1;
    const box = el("div", { class: "rounds" });
    if (view.rounds.length) {
      const names = view.players.map((p) => p.name);
      box.append(el("table", { class: "breakdown" },
        el("thead", {}, el("tr", {}, el("th", { text: "Scoring" }), names.map((n) => el("th", { class: "num", text: n })))),
        el("tbody", {}, view.rounds.map((r) => el("tr", {}, el("th", { text: "Round " + r.round }),
          names.map((n) => {
            const entry = (r.report.players || []).find((e) => e.name === n) || {};
            return el("td", { class: "num", text: `+${entry.round_points ?? 0} = ${entry.total ?? ""}` });
          }))))));
    }
    const last = view.form.last_round;
    const done = view.rounds.some((r) => r.round === last);
    if (!done) {
      box.append(el("button", {
        class: "primary", type: "button", disabled: view.report && !(view.incomplete || []).length ? null : true,
        onclick: () => api("POST", base() + "/rounds"),
        text: round < last ? `Record scoring ${round} and go on to scoring ${round + 1}` : "Record the final scoring",
      }));
    } else {
      box.append(el("p", { class: "good", text: "Final scoring recorded." }));
    }
    return box;
  }

  // ---------------------------------------------------------------- settings

  function renderSettings() {
    const box = document.getElementById("settings");
    box.replaceChildren();
    box.append(...hook("settings", []));
    const list = document.getElementById("shortcuts");
    list.replaceChildren(...view.form.shortcuts.flatMap(([k, d]) => [el("dt", { text: k }), el("dd", { text: d })]));
  }

  // ---------------------------------------------------------------- players

  function renderPlayers() {
    const box = document.getElementById("players");
    const open = new Set([...box.querySelectorAll("details.photo-box[open]")].map((d) => d.dataset.pid));
    box.replaceChildren(...view.players.map((p) => renderPlayer(p, open.has(String(p.id)))));
  }

  function playerScore(p) {
    if (!p.entered) return "not entered"; // a blank board scores nothing real (a blank window: -20): say so instead
    if (!p.report) return "–";
    return p.report[view.form.score_key] ?? "–";
  }

  function renderPlayer(p, photoOpen) {
    const card = el("section", { class: "panel player", id: "player-" + p.id, dataset: { pid: p.id } });
    const head = el("div", { class: "player-head" });
    const nameInput = el("input", { class: "player-name", value: p.name, "aria-label": "Player name", maxlength: 40,
      onchange: (e) => fieldChange(head, nameInput, () => api("PATCH", playerUrl(p.id), { name: e.target.value })) });
    head.append(nameInput, el("span", { class: "player-score", title: "score", text: playerScore(p) }));
    card.append(head);
    const verdict = renderVerdict(p);
    if (verdict) card.append(verdict);
    card.append(renderFields(p));
    card.append(renderPhoto(p, photoOpen));
    card.append(game.board(p));
    if (selected && selected.pid === p.id) card.append(renderPalette(p));
    card.append(renderEvidence(p));
    const issueItem = (issue) => el("li", {
        class: issue.explained_by.length ? "explained" : "",
        onclick: () => { if (issue.cells.length) select_(p.id, issue.cells[0]); },
      }, el("strong", { "data-rule": issue.rule, text: words(issue.rule) + ":" }), " ", hook("issueDetail", issue.detail, issue, p), // a game may reword the places
      issue.explained_by.length ? el("span", { class: "muted", text: " (possible with " + issue.explained_by.join(", ") + ")" }) : null);
    const broken = p.issues.filter((i) => !i.explained_by.length);
    const explained = p.issues.filter((i) => i.explained_by.length);
    if (broken.length) card.append(el("ul", { class: "issues" }, broken.map(issueItem)));
    if (explained.length) {
      card.append(el("details", { class: "explained-issues" },
        el("summary", { text: `${explained.length} placement note${explained.length === 1 ? "" : "s"} a tool card can explain` }),
        el("ul", { class: "issues" }, explained.map(issueItem))));
    }
    return card;
  }

  // the scanner's verdict on the board as read from its photo (view player.review), leading the board
  function renderVerdict(p) {
    const review = p.review;
    if (!review) return null;
    const corrected = review.corrected
      ? el("p", { class: "muted small", text: `You corrected ${review.corrected} cell${review.corrected === 1 ? "" : "s"} since this scan.` })
      : null;
    if (!review.needed) {
      return el("div", { class: "verdict verdict-ok", role: "status" },
        el("p", { class: "good", text: "The scanner stands behind this board." }), corrected);
    }
    return el("div", { class: "verdict verdict-look", role: "status" },
      el("p", {}, el("strong", { text: "Needs a look:" }), review.reasons.length === 1 ? " " + review.reasons[0] : ""),
      review.reasons.length > 1 ? el("ul", { class: "small" }, review.reasons.map((reason) => el("li", { text: reason }))) : null,
      corrected);
  }

  function renderEvidence(p) {
    return el("div", { class: "evidence" }, hook("evidence", [], p));
  }

  function renderFields(p) {
    return el("div", { class: "row fields" }, hook("fields", [], p));
  }

  // ---------------------------------------------------------------- photo

  function renderPhoto(p, open) {
    const box = el("details", { class: "photo-box", dataset: { pid: p.id }, open: open || (p.photo && !p.cells.some((c) => c.source !== "scan")) ? true : null });
    const models = (p.model || "").replace(/\s*\(sha256 [0-9a-f]+\)/g, "");
    box.append(el("summary", { title: p.model || "" }, p.photo ? "Photo" + (models ? " · read by " + models : "") : "Photo (optional)"));
    const input = el("input", { type: "file", accept: "image/*", capture: "environment", class: "photo-input", "aria-label": "Upload a photo for " + p.name,
      onchange: (e) => {
        const file = e.target.files[0];
        if (!file) return;
        const form = new FormData();
        form.append("photo", file, file.name);
        notice("Uploading " + file.name + "…");
        box.open = true;
        // one upload at a time: the button stays off until the server answers (a refused photo re-enables it)
        input.disabled = true;
        button.textContent = view.scanner ? "Reading…" : "Uploading…";
        button.classList.add("disabled");
        upload.setAttribute("aria-busy", "true");
        api("POST", playerUrl(p.id) + "/photo", form).finally(() => {
          input.disabled = false;
          input.value = "";
          button.textContent = label;
          button.classList.remove("disabled");
          upload.removeAttribute("aria-busy");
        });
      } });
    const label = p.photo ? "Replace photo" : "Upload or take a photo";
    const button = el("span", { class: "button", text: label });
    const upload = el("label", { class: "upload" }, button, input);
    box.append(upload);
    if (!p.photo) return box;
    const W = p.photo.width_px, H = p.photo.height_px;
    const image = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "photo-view", role: "img", "aria-label": "photo with the read cells" });
    image.append(svg("image", { href: p.photo.url, x: 0, y: 0, width: W, height: H }));
    const stroke = Math.max(2, Math.round(Math.max(W, H) / 400));
    const issueCells = new Set(p.issues.flatMap((i) => i.cells));
    const longest = Math.max(2, ...p.cells.filter((r) => r.polygon).map((r) => shortValue(r.value).length));
    for (const r of p.cells) {
      if (!r.polygon || r.polygon.length < 3) continue;
      const points = r.polygon.map(([x, y]) => x + "," + y).join(" ");
      const isSel = selected && selected.pid === p.id && selected.cell === r.cell;
      const g = svg("g", { class: "cell-poly " + confidenceClass(r) + (isSel ? " selected" : "") + (issueCells.has(r.cell) ? " violation" : ""),
        "data-cell": r.cell, onclick: () => select_(p.id, r.cell) });
      g.append(svg("polygon", { points, "stroke-width": stroke }));
      const cx = r.polygon.reduce((s, [x]) => s + x, 0) / r.polygon.length;
      const cy = r.polygon.reduce((s, [, y]) => s + y, 0) / r.polygon.length;
      // the label fits inside its cell (tilted too: the shortest side bounds it), so labels never run into each other
      const text = shortValue(r.value);
      const side = Math.min(...r.polygon.map(([x, y], i) => { const [u, v] = r.polygon[(i + 1) % r.polygon.length]; return Math.hypot(u - x, v - y); }));
      const fontSize = Math.min(side * 0.42, (side * 0.85) / (LABEL_EM * longest)); // sized for the longest: one size for all
      g.append(svg("text", { x: cx, y: cy, "font-size": fontSize.toFixed(1), "data-fs": fontSize.toFixed(1), "text-anchor": "middle", "dominant-baseline": "central", text }));
      g.append(svg("title", { text: `${cellLabel(r.cell, p)}: ${valueName(r.value)}` + (r.confidence != null ? ` (${Math.round(r.confidence * 100)}%)` : "") }));
      image.append(g);
    }
    const wrap = el("div", { class: "photo-wrap" }, image);
    const hiddenNote = el("p", { class: "muted small label-note", hidden: true, text: "Labels too small to read are hidden: zoom in, or tap a cell." });
    const tools = zoomTools(p, image, wrap, W, hiddenNote);
    if (!view.scanner) {  // no scanner for this game: nothing would re-read the board, so no corners to drag
      box.append(tools, wrap, hiddenNote);
      return box;
    }
    const corners = p.corners || [[W * 0.1, H * 0.1], [W * 0.9, H * 0.1], [W * 0.9, H * 0.9], [W * 0.1, H * 0.9]];
    const quad = svg("polygon", { class: "corner-quad", points: corners.map((c) => c.join(",")).join(" "), "stroke-width": stroke });
    image.append(quad);
    const radius = Math.max(W, H) / 60;
    corners.forEach((corner, index) => {
      const handle = svg("circle", { class: "corner", cx: corner[0], cy: corner[1], r: radius, "data-corner": index, "stroke-width": stroke });
      handle.append(svg("title", { text: ["top-left", "top-right", "bottom-right", "bottom-left"][index] + " corner: drag to rescan" }));
      dragCorner(handle, image, corners, quad, index, p);
      image.append(handle);
    });
    box.append(tools, wrap, hiddenNote);
    box.append(el("p", { class: "muted small", text: "Drag the four corners onto the board's corners to re-read it; tap a cell to correct it." }));
    // only doubtful readings are chips: none when the scanner stands behind the board (its verdict leads the card)
    const vouched = p.review && !p.review.needed;
    const uncertain = vouched ? [] : p.cells.filter((r) => r.confidence !== null && r.confidence !== undefined && r.source === "scan" && r.confidence < SURE)
      .sort((a, b) => a.confidence - b.confidence).slice(0, 8);
    if (uncertain.length) {
      box.append(el("div", { class: "uncertain" }, el("span", { class: "muted", text: "Least certain first:" }),
        uncertain.map((r) => el("button", { type: "button", class: "chip " + confidenceClass(r), onclick: () => select_(p.id, r.cell) },
          `${cellLabel(r.cell, p)}: ${valueName(r.value)} ${Math.round(r.confidence * 100)}%`))));
    }
    return box;
  }

  // The photo's zoom: fit to the page (1), closer steps, or the photo's own pixels ("full"); kept per player across renders.
  function zoomTools(p, image, wrap, W, hiddenNote) {
    const level = () => zooms[p.id] || 1;
    const factor = () => (level() === "full" ? Math.max(1, W / Math.max(1, wrap.clientWidth)) : level());
    const apply = () => {
      const z = factor();
      wrap.classList.toggle("zoomed", z > 1);
      image.style.width = z > 1 ? (z * 100).toFixed(0) + "%" : ""; // CSSOM: allowed by the page's CSP
      out.disabled = z <= 1;
      full.disabled = level() === "full";
      wrap.dataset.zoom = z.toFixed(2);
    };
    const set = (next, centre) => {
      const before = factor();
      const at = centre || [0.5, 0.5];
      const fx = (wrap.scrollLeft + wrap.clientWidth * at[0]) / Math.max(1, wrap.scrollWidth);
      const fy = (wrap.scrollTop + wrap.clientHeight * at[1]) / Math.max(1, wrap.scrollHeight);
      zooms[p.id] = next;
      apply();
      if (factor() !== before) { // keep the spot under the pointer (or the middle) where it was
        wrap.scrollLeft = fx * wrap.scrollWidth - wrap.clientWidth * at[0];
        wrap.scrollTop = fy * wrap.scrollHeight - wrap.clientHeight * at[1];
      }
    };
    const step = (dir) => {
      const z = factor();
      const next = dir > 0 ? Math.min(ZOOM_MAX, z * 2) : z / 2;
      return next <= 1.01 ? 1 : next;
    };
    const zin = el("button", { type: "button", class: "small zoom-in", "aria-label": "Zoom in on the photo", onclick: () => set(step(1)), text: "+" });
    const out = el("button", { type: "button", class: "small zoom-out", "aria-label": "Zoom out", onclick: () => set(step(-1)), text: "−" });
    const full = el("button", { type: "button", class: "small zoom-full", onclick: () => set("full"), text: "Full size" });
    const fit = el("button", { type: "button", class: "small zoom-fit", onclick: () => set(1), text: "Fit" });
    // ctrl + wheel, which is also what a trackpad pinch sends
    image.addEventListener("wheel", (e) => {
      if (!e.ctrlKey) return;
      e.preventDefault();
      const box = wrap.getBoundingClientRect();
      set(step(e.deltaY < 0 ? 1 : -1), [(e.clientX - box.left) / box.width, (e.clientY - box.top) / box.height]);
    }, { passive: false });
    // touch: two fingers pinch the zoom, one finger pans a zoomed photo (a corner handle keeps its own drag)
    const touches = new Map();
    let pinch = null; // {distance, zoom} when two fingers went down
    const spread = () => { const [a, b] = [...touches.values()]; return Math.hypot(a[0] - b[0], a[1] - b[1]); };
    image.addEventListener("pointerdown", (e) => {
      if (e.pointerType !== "touch" || e.target.closest(".corner")) return;
      touches.set(e.pointerId, [e.clientX, e.clientY]);
      if (touches.size === 2) pinch = { distance: Math.max(1, spread()), zoom: factor() };
    });
    image.addEventListener("pointermove", (e) => {
      const last = touches.get(e.pointerId);
      if (!last) return;
      touches.set(e.pointerId, [e.clientX, e.clientY]);
      if (pinch && touches.size === 2) {
        const next = Math.min(ZOOM_MAX, pinch.zoom * (spread() / pinch.distance));
        set(next <= 1.01 ? 1 : next);
      } else if (touches.size === 1 && factor() > 1) {
        wrap.scrollLeft -= e.clientX - last[0];
        wrap.scrollTop -= e.clientY - last[1];
      }
    });
    const lift = (e) => { touches.delete(e.pointerId); if (touches.size < 2) pinch = null; };
    image.addEventListener("pointerup", lift);
    image.addEventListener("pointercancel", lift);
    // hide the labels too small to read at this size (they show on hover and on the selected cell)
    const fitLabels = () => {
      const scale = image.getBoundingClientRect().width / W;
      if (!scale) return;
      let hidden = 0;
      for (const text of image.querySelectorAll("text[data-fs]")) {
        const small = Number(text.dataset.fs) * scale < MIN_LABEL_PX && text.textContent !== "";
        text.parentNode.classList.toggle("label-hidden", small);
        if (small) hidden += 1;
      }
      hiddenNote.hidden = hidden === 0;
    };
    new ResizeObserver(fitLabels).observe(image);
    // every answer redraws the page: a zoomed photo keeps where it was scrolled to
    wrap.addEventListener("scroll", () => { scrolls[p.id] = [wrap.scrollLeft, wrap.scrollTop]; });
    requestAnimationFrame(() => {
      apply();
      fitLabels();
      if (scrolls[p.id]) [wrap.scrollLeft, wrap.scrollTop] = scrolls[p.id];
    });
    return el("div", { class: "zoom-tools", role: "group", "aria-label": "Photo zoom" }, el("span", { class: "muted small", text: "Zoom:" }), out, zin, full, fit);
  }

  function dragCorner(handle, image, corners, quad, index, p) {
    let dragging = false;
    handle.addEventListener("pointerdown", (e) => { dragging = true; handle.setPointerCapture(e.pointerId); e.preventDefault(); });
    handle.addEventListener("pointermove", (e) => {
      if (!dragging) return;
      const point = new DOMPoint(e.clientX, e.clientY).matrixTransform(image.getScreenCTM().inverse());
      corners[index] = [Math.round(point.x), Math.round(point.y)];
      handle.setAttribute("cx", corners[index][0]);
      handle.setAttribute("cy", corners[index][1]);
      quad.setAttribute("points", corners.map((c) => c.join(",")).join(" "));
    });
    const finish = () => {
      if (!dragging) return;
      dragging = false;
      notice("Re-reading the board…");
      api("POST", playerUrl(p.id) + "/rescan", { corners });
    };
    handle.addEventListener("pointerup", finish);
    handle.addEventListener("pointercancel", finish);
  }

  const shortValue = (value) => hook("shortValue", value === "." ? "" : value, value);
  const cellLabel = (cell, p) => hook("cellLabel", cell, cell, p); // a cell in the players' words (a palace tile: from its fountain)
  const valueName = (value) => hook("valueName", shortValue(value) || "empty", value); // a value in words, where there is room

  // ---------------------------------------------------------------- boards

  // One cell of a game's board; ``lateClass`` goes after the shared state classes.
  function cellButton(p, cell, issueCells, extraClass, content, label, lateClass) {
    const r = reading(p, cell);
    const isSel = selected && selected.pid === p.id && selected.cell === cell;
    return el("button", {
      type: "button", class: ["cell", extraClass, confidenceClass(r), isSel ? "selected" : "", issueCells.has(cell) ? "violation" : "",
        highlight && highlight.pid === p.id && highlight.cells.has(cell) ? "earned" : "",
        lateClass].filter(Boolean).join(" "),
      "data-cell": cell, "aria-label": label, title: label + (r && r.confidence != null ? ` · ${Math.round(r.confidence * 100)}% sure` : ""),
      onclick: () => select_(p.id, cell),
    }, content);
  }

  // ---------------------------------------------------------------- picker

  function renderPalette(p) {
    const cell = selected.cell;
    const value = cellValue(p, cell);
    const pal = el("div", { class: "palette", role: "toolbar", "aria-label": "Set " + cellLabel(cell, p) });
    pal.append(el("div", { class: "palette-head" }, el("strong", { text: "Set " + cellLabel(cell, p) }),
      el("button", { type: "button", class: "small", onclick: () => { selected = null; render(); }, text: "Close" })));
    // the scanner's second and third readings of this cell come first: the likeliest fixes of a misread
    const reading = p.cells.find((c) => c.cell === cell);
    const next = ((reading && reading.alternatives) || []).filter((v) => v !== value);
    if (next.length) {
      pal.append(el("div", { class: "alternatives", role: "group", "aria-label": "The scanner's next readings" },
        el("span", { class: "muted", text: "Scanner's next readings:" }),
        ...next.map((v) => el("button", { type: "button", class: "chip alternative", "data-value": v, "aria-label": "Set " + cellLabel(cell, p) + " to " + valueName(v),
          onclick: () => setCell(p.id, cell, v) }, shortValue(v) || "empty"))));
    }
    pal.append(...hook("picker", [], p, cell, value));
    return pal;
  }

  function select_(pid, cell) {
    selected = { pid, cell };
    hook("onSelect");
    render();
    const button = document.querySelector(`#player-${pid} .board [data-cell="${cell}"]`);
    if (button) button.focus({ preventScroll: false });
  }

  // ---------------------------------------------------------------- keyboard

  function move(dx, dy) {
    if (!selected) return;
    select_(selected.pid, game.move(selected.cell, dx, dy));
  }

  document.addEventListener("keydown", (e) => {
    if (!selected || e.ctrlKey || e.metaKey || e.altKey) return;
    const tag = (e.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea") return;
    const p = player(selected.pid);
    if (!p) return;
    const key = e.key;
    const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    if (arrows[key]) { e.preventDefault(); move(...arrows[key]); return; }
    if (key === "Escape") { selected = null; render(); return; }
    const value = cellValue(p, selected.cell);
    const cell = selected.cell;
    const handled = hook("key", false, key, p, cell, value);
    if (handled) e.preventDefault();
  });

  // ---------------------------------------------------------------- page

  function render() {
    document.getElementById("game-name").textContent = view.name;
    renderStandings();
    renderSettings();
    renderPlayers();
    for (const part of parts) part(view);
    if (view.error) document.body.dataset.scored = "no"; else document.body.dataset.scored = "yes";
  }

  // Other phones at the table edit the same game: pick up their changes while this page is idle.
  async function refresh() {
    if (busy || document.hidden) return;
    const tag = (document.activeElement && document.activeElement.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea") return;
    const started = changes;
    try {
      const response = await fetch("/games/" + view.id + ".json", { headers: { Accept: "application/json" } });
      if (!response.ok || busy || changes !== started) return;
      const fresh = await response.json();
      if (busy || changes !== started) return;
      if (fresh.updated_at !== view.updated_at) { view = fresh; render(); }
    } catch (error) { /* offline for a moment: try again next time */ }
  }

  // ---------------------------------------------------------------- game modules

  // Call the game module's ``name`` hook, or give ``fallback`` when it has none.
  function hook(name, fallback, ...args) {
    return game && typeof game[name] === "function" ? game[name](...args) : fallback;
  }

  // What a game module may use: the shared widgets, the view and the edits it can ask for.
  const ui = {
    el, svg, notice, select, numberInput, fieldChange, cellButton, setCell, patchSettings, patchFields, render, words, api, base,
    view: () => view,
    selected: () => selected,
    selectCell: select_,
    highlight: () => highlight,
    setHighlight: (next) => { highlight = next; render(); },
    cellValue, reading, cellLabel,
    issueCells: (p) => new Set(p.issues.flatMap((i) => i.cells)),
  };

  function start() {
    const initial = document.getElementById("initial-view");
    if (!initial) return;
    view = JSON.parse(initial.textContent);
    const factory = modules[view.game];
    if (!factory) { notice("this page has no board editor for " + view.title + " (its script did not load)", "bad"); return; }
    game = factory(ui);
    parts = extensions.map((make) => make(ui));
    setInterval(refresh, 4000);
    render();
    window.tablescanView = () => view; // for tests and debugging
  }

  // game modules load after this script; the parser has run them all before DOMContentLoaded
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
