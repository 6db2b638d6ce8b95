// tablescan review: the game page. Plain JS, no build step, no outside assets.
// The page renders everything from one JSON "view" that every API call returns afresh.
(function () {
  "use strict";

  const initial = document.getElementById("initial-view");
  if (!initial) return;
  let view = JSON.parse(initial.textContent);
  let selected = null; // {pid, cell}
  let pendingColor = null; // Sagrada: colour typed on an empty cell, waiting for its value
  let busy = 0;
  let changes = 0; // bumped by every answer from the API; a poll started before one is stale
  let highlight = null; // {pid, id, cells: Set}: the dice that earned one objective

  const COLORS = { R: "red", Y: "yellow", G: "green", B: "blue", P: "purple" };
  const TYPE_KEYS = ["pavilion", "seraglio", "arcades", "chambers", "garden", "tower"];
  const TYPE_SHORT = { pavilion: "Pav", seraglio: "Ser", arcades: "Arc", chambers: "Cha", garden: "Gar", tower: "Tow", fountain: "◎" };

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
        notice(data.error || "request failed", "bad");
        return false;
      }
      view = data;
      changes += 1;
      notice(view.notice || "", view.notice ? "warn" : "");
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

  function numberInput(label, value, onchange, attrs) {
    return el("label", { class: "field" }, label,
      el("input", Object.assign({ type: "number", inputmode: "numeric", value: value ?? 0, min: 0, onchange: (e) => onchange(e.target.value) }, attrs || {})));
  }

  function select(label, options, value, onchange, attrs) {
    const node = el("select", Object.assign({ onchange: (e) => onchange(e.target.value) }, attrs || {}),
      options.map(([v, text]) => el("option", { value: v, selected: v === value ? true : null, text })));
    return el("label", { class: "field" }, label, node);
  }

  // ---------------------------------------------------------------- standings

  function flatten(entry, prefix, out) {
    for (const [key, value] of Object.entries(entry || {})) {
      if (["name", "total", "prestige", "violations"].includes(key) && !prefix) continue;
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
    if (view.report) {
      const winners = [].concat(view.report.winner ?? []);
      const table = el("table", { class: "standings" },
        el("thead", {}, el("tr", {}, el("th", { text: "#" }), el("th", { text: "Player" }), el("th", { class: "num", text: "Score" }), el("th", { text: "Tie-break" }))),
        el("tbody", {}, view.standings.map((row) =>
          el("tr", { class: winners.includes(row.name) ? "winner" : "" },
            el("td", { text: row.place }), el("td", { text: row.name + (winners.includes(row.name) ? " ★" : "") }),
            el("td", { class: "num score", text: row.score }), el("td", { class: "muted", text: row.note })))));
      box.append(table);
      if (view.report.solo) {
        box.append(el("p", { class: view.report.solo.won ? "good" : "bad" },
          `Solo target ${view.report.solo.target}: ${view.report.solo.won ? "won" : "lost"}`));
      }
      if (!view.standings.some((row) => row.note)) {
        for (const line of view.tie_breaks || []) box.append(el("p", { class: "muted small", text: "Tie: " + line }));
      }
      box.append(renderBreakdown());
      if (view.text) box.append(el("details", { class: "report-text" }, el("summary", { text: "Full report, explained" }), el("pre", { text: view.text })));
      if (view.report.dirk) {
        const dirk = view.report.dirk;
        box.append(el("p", { class: "muted" }, "Dirk: " + (dirk.round_points ?? 0) + " points (" +
          (Object.entries(dirk.majorities || {}).map(([k, v]) => k + " " + v).join(", ") || "no majorities") + ")"));
      }
      if (view.report.market_awards && view.report.market_awards.length) {
        box.append(el("p", { class: "muted" }, "Market: " + view.report.market_awards.map((a) =>
          `${a.type}${a.walls ? " (" + a.walls + ")" : ""} for ${a.currency} → ${a.to ?? "nobody"}`).join("; ")));
      }
    }
    if (view.form.several_scorings) box.append(renderRounds());
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
    const head = el("tr", {}, el("th", { text: "Breakdown" }), columns.map((c) => el("th", { class: "num", title: c.id, text: c.key })));
    const table = el("table", { class: "breakdown" },
      el("thead", {},
        el("tr", { class: "groups" }, el("th"), columns.map((c, i) => el("th", { class: "group", text: i === 0 || columns[i - 1].group !== c.group ? (c.group || "") : "" }))),
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
    const done = view.rounds.some((r) => r.round === 3);
    if (!done) {
      box.append(el("button", {
        class: "primary", type: "button", disabled: view.report ? null : true,
        onclick: () => api("POST", base() + "/rounds"),
        text: round < 3 ? `Record scoring ${round} and go on to scoring ${round + 1}` : "Record the final scoring",
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
    const s = view.settings;
    const opts = view.options;
    if (view.game === "sagrada") {
      const chosen = s.public_objectives || [];
      const slots = view.players.length === 1 ? [0, 1] : [0, 1, 2];
      const pick = slots.map((i) => select("Public objective " + (i + 1),
        [["", "—"]].concat(opts.public_objectives.map((o) => [o, o])), chosen[i] || "", (value) => {
          const next = slots.map((j) => (j === i ? value : chosen[j] || "")).filter(Boolean);
          patchSettings({ public_objectives: next });
        }, { "data-objective": i }));
      box.append(el("div", { class: "row" }, pick));
      if (view.players.length === 1) {
        const solo = s.solo || { private_objectives: ["red", "blue"], round_track_sum: 0 };
        box.append(el("div", { class: "row" },
          [0, 1].map((i) => select("Private objective " + (i + 1), opts.colors.map((c) => [c, c]), solo.private_objectives[i], (value) => {
            const privates = solo.private_objectives.slice(); privates[i] = value;
            patchSettings({ solo: { private_objectives: privates, round_track_sum: solo.round_track_sum } });
          })),
          numberInput("Round track sum", solo.round_track_sum, (value) =>
            patchSettings({ solo: { private_objectives: solo.private_objectives, round_track_sum: value } }))));
      }
    } else if (view.game === "alhambra") {
      box.append(el("div", { class: "row" },
        select("Scoring round", [[1, "1 (first scoring card)"], [2, "2 (second scoring card)"], [3, "3 (final)"]].map(([v, t]) => [String(v), t]),
          String(s.scoring_round || 1), (value) => patchSettings({ scoring_round: Number(value) }), { id: "scoring-round" })));
      if (view.players.length === 2 && s.dirk) {
        box.append(el("h3", { text: "Dirk's buildings (2-player game)" }),
          el("div", { class: "row" }, opts.tile_types.map((t) => numberInput(t, s.dirk[t], (value) => {
            const dirk = Object.assign({}, s.dirk, { [t]: value });
            patchSettings({ dirk });
          }, { max: 20 }))));
      }
      if ((s.scoring_round || 1) === 3) {
        const market = s.market || [];
        const save = (next) => patchSettings({ market: next });
        box.append(el("h3", { text: "Market tiles left for the final scoring" }),
          el("div", { class: "market" }, market.map((tile, i) => el("div", { class: "row" },
            select("Currency", opts.currencies.map((c) => [c, c]), tile.currency, (v) => save(market.map((t, j) => (j === i ? Object.assign({}, t, { currency: v }) : t)))),
            select("Type", opts.tile_types.map((c) => [c, c]), tile.type, (v) => save(market.map((t, j) => (j === i ? Object.assign({}, t, { type: v }) : t)))),
            el("label", { class: "field" }, "Walls", el("input", { value: tile.walls, size: 4, maxlength: 4, onchange: (e) => save(market.map((t, j) => (j === i ? Object.assign({}, t, { walls: e.target.value }) : t))) })),
            el("button", { type: "button", class: "small", onclick: () => save(market.filter((_, j) => j !== i)), text: "Remove" })))),
          el("div", {}, market.length < 4 ? el("button", { type: "button", class: "small", onclick: () => save(market.concat([{ currency: "denar", type: "garden", walls: "" }])), text: "Add a market tile" }) : null));
        box.append(el("p", { class: "muted", text: "Each player's money is entered beside their palace." }));
      }
    } else {
      box.append(el("p", { class: "muted", text: "Splendor has no game settings: enter each player's cards and nobles below." }));
    }
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
    if (!p.report) return "–";
    return p.report.total ?? p.report.prestige ?? "–";
  }

  function renderPlayer(p, photoOpen) {
    const card = el("section", { class: "panel player", id: "player-" + p.id, dataset: { pid: p.id } });
    card.append(el("div", { class: "player-head" },
      el("input", { class: "player-name", value: p.name, "aria-label": "Player name", maxlength: 40,
        onchange: (e) => api("PATCH", playerUrl(p.id), { name: e.target.value }) }),
      el("span", { class: "player-score", title: "score", text: playerScore(p) })));
    card.append(renderFields(p));
    card.append(renderPhoto(p, photoOpen));
    card.append(renderBoard(p));
    if (selected && selected.pid === p.id) card.append(renderPalette(p));
    card.append(renderEvidence(p));
    const issueItem = (issue) => el("li", {
        class: issue.explained_by.length ? "explained" : "",
        onclick: () => { if (issue.cells.length) select_(p.id, issue.cells[0]); },
      }, el("strong", { text: issue.rule }), " ", issue.detail,
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

  function renderEvidence(p) {
    const ev = p.evidence || {};
    const box = el("div", { class: "evidence" });
    if (ev.objectives && ev.objectives.length) {
      box.append(el("div", { class: "muted small", text: "Where the points come from (tap to show the dice):" }));
      box.append(el("div", { class: "objective-list" }, ev.objectives.map((o) => {
        const cells = new Set(o.units.flatMap((u) => u.cells));
        const on = highlight && highlight.pid === p.id && highlight.id === o.id;
        return el("button", { type: "button", class: "chip objective" + (on ? " on" : ""), "aria-pressed": on ? "true" : "false",
          title: o.units.map((u) => u.label).join("; ") + (o.note ? " (" + o.note + ")" : ""),
          onclick: () => { highlight = on ? null : { pid: p.id, id: o.id, cells }; render(); } },
        el("span", { text: o.id }), " ", el("strong", { text: o.points }));
      })));
    }
    if (ev.wall && ev.wall.length) {
      box.append(el("p", { class: "muted small" }, el("span", { class: "wall-key" }), ` longest wall: ${ev.wall.length} segment${ev.wall.length === 1 ? "" : "s"}, drawn in orange`));
    }
    return box;
  }

  function renderFields(p) {
    const f = p.fields;
    const opts = view.options;
    const row = el("div", { class: "row fields" });
    if (view.game === "sagrada") {
      if (view.players.length > 1) {
        row.append(select("Private objective", opts.colors.map((c) => [c, c]), f.private_objective, (v) => patchFields(p.id, { private_objective: v })));
        row.append(numberInput("Favor tokens left", f.favor_tokens, (v) => patchFields(p.id, { favor_tokens: v }), { max: 12 }));
      }
      row.append(select("Window pattern", [["", "— none —"]].concat(opts.patterns.map((x) => [x.name, x.name + " (" + x.difficulty + ")"])),
        f.pattern || "", (v) => patchFields(p.id, { pattern: v || null })));
    } else if (view.game === "alhambra") {
      row.append(numberInput("Points before this scoring", f.score_before, (v) => patchFields(p.id, { score_before: v }), { max: 999 }));
      row.append(el("label", { class: "field" }, "Reserve (never scores)", el("input", { value: (f.reserve || []).join(", "), placeholder: "garden:N, tower:ES", size: 16,
        onchange: (e) => patchFields(p.id, { reserve: e.target.value }) })));
      if ((view.settings.scoring_round || 1) === 3) {
        for (const c of opts.currencies) {
          row.append(numberInput(c, (f.money || {})[c], (v) => patchFields(p.id, { money: Object.assign({}, f.money, { [c]: v }) }), { max: 200 }));
        }
      }
    } else {
      const chosen = Array.isArray(f.nobles) ? f.nobles : [];
      if (!chosen.length) row.append(numberInput("Nobles", f.nobles, (v) => patchFields(p.id, { nobles: v }), { max: 10 }));
      row.append(numberInput("Reserved cards", f.reserved, (v) => patchFields(p.id, { reserved: v }), { max: 3 }));
      row.append(el("details", { class: "nobles", open: chosen.length ? true : null },
        el("summary", { text: chosen.length ? `Nobles: ${chosen.join(", ")}` : "Or pick which nobles (checks their requirements)" }),
        el("div", { class: "noble-list" }, opts.nobles.map((n) => el("label", { class: "noble" },
          el("input", { type: "checkbox", checked: chosen.includes(n.id) ? true : null, onchange: (e) => {
            const next = e.target.checked ? chosen.concat([n.id]) : chosen.filter((x) => x !== n.id);
            patchFields(p.id, { nobles: next.length ? next : 0 });
          } }), ` ${n.id}: ${n.label}`)))));
    }
    return row;
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
        api("POST", playerUrl(p.id) + "/photo", form);
      } });
    box.append(el("label", { class: "upload" }, el("span", { class: "button", text: p.photo ? "Replace photo" : "Upload or take a photo" }), input));
    if (!p.photo) return box;
    const W = p.photo.width_px, H = p.photo.height_px;
    const image = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "photo-view", role: "img", "aria-label": "photo with the read cells" });
    image.append(svg("image", { href: p.photo.url, x: 0, y: 0, width: W, height: H }));
    const stroke = Math.max(2, Math.round(Math.max(W, H) / 400));
    const issueCells = new Set(p.issues.flatMap((i) => i.cells));
    for (const r of p.cells) {
      if (!r.polygon || r.polygon.length < 3) continue;
      const points = r.polygon.map(([x, y]) => x + "," + y).join(" ");
      const isSel = selected && selected.pid === p.id && selected.cell === r.cell;
      const g = svg("g", { class: "cell-poly " + confidenceClass(r) + (isSel ? " selected" : "") + (issueCells.has(r.cell) ? " violation" : ""),
        "data-cell": r.cell, onclick: () => select_(p.id, r.cell) });
      g.append(svg("polygon", { points, "stroke-width": stroke }));
      const cx = r.polygon.reduce((s, [x]) => s + x, 0) / r.polygon.length;
      const cy = r.polygon.reduce((s, [, y]) => s + y, 0) / r.polygon.length;
      const size = Math.max(...r.polygon.map(([x]) => x)) - Math.min(...r.polygon.map(([x]) => x));
      g.append(svg("text", { x: cx, y: cy, "font-size": Math.max(10, size / 3.2), "text-anchor": "middle", "dominant-baseline": "central", text: shortValue(r.value) }));
      g.append(svg("title", { text: `${r.cell}: ${r.value || "empty"}` + (r.confidence != null ? ` (${Math.round(r.confidence * 100)}%)` : "") }));
      image.append(g);
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
    box.append(el("div", { class: "photo-wrap" }, image));
    box.append(el("p", { class: "muted small", text: "Drag the four corners onto the board's corners to re-read it; tap a cell to correct it." }));
    const uncertain = p.cells.filter((r) => r.confidence !== null && r.confidence !== undefined && r.source === "scan")
      .sort((a, b) => a.confidence - b.confidence).slice(0, 8);
    if (uncertain.length) {
      box.append(el("div", { class: "uncertain" }, el("span", { class: "muted", text: "Least certain first:" }),
        uncertain.map((r) => el("button", { type: "button", class: "chip " + confidenceClass(r), onclick: () => select_(p.id, r.cell) },
          `${cellLabel(r.cell)} ${shortValue(r.value) || "empty"} ${Math.round(r.confidence * 100)}%`))));
    }
    return box;
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

  function shortValue(value) {
    if (view.game === "alhambra") {
      if (!value) return "";
      const [kind, walls] = value.split(":");
      return (TYPE_SHORT[kind] || kind) + (walls ? " " + walls : "");
    }
    return value === "." ? "" : value;
  }

  function cellLabel(cell) {
    if (view.game === "sagrada") { const [r, c] = cell.split(","); return `r${Number(r) + 1}c${Number(c) + 1}`; }
    if (view.game === "alhambra") return "(" + cell + ")";
    return cell.replace(":", " ") + "pt";
  }

  // ---------------------------------------------------------------- boards

  function renderBoard(p) {
    if (view.game === "sagrada") return sagradaBoard(p);
    if (view.game === "alhambra") return alhambraBoard(p);
    return splendorBoard(p);
  }

  function cellButton(p, cell, issueCells, extraClass, content, label) {
    const r = reading(p, cell);
    const isSel = selected && selected.pid === p.id && selected.cell === cell;
    return el("button", {
      type: "button", class: ["cell", extraClass, confidenceClass(r), isSel ? "selected" : "", issueCells.has(cell) ? "violation" : "",
        highlight && highlight.pid === p.id && highlight.cells.has(cell) ? "earned" : "",
        ((p.evidence || {}).wall || []).filter((w) => w.cell === cell).map((w) => "lw-" + w.side).join(" ")].filter(Boolean).join(" "),
      "data-cell": cell, "aria-label": label, title: label + (r && r.confidence != null ? ` · ${Math.round(r.confidence * 100)}% sure` : ""),
      onclick: () => select_(p.id, cell),
    }, content);
  }

  function sagradaBoard(p) {
    const issueCells = new Set(p.issues.flatMap((i) => i.cells));
    const grid = el("div", { class: "board sagrada", role: "grid", "aria-label": p.name + "'s window" });
    for (let r = 0; r < 4; r++) {
      for (let c = 0; c < 5; c++) {
        const cell = `${r},${c}`;
        const value = cellValue(p, cell) || ".";
        const restriction = p.pattern_grid ? p.pattern_grid[r][c] : ".";
        let content, cls;
        if (value === ".") {
          cls = "empty" + (restriction !== "." ? (/[1-6]/.test(restriction) ? " need-value" : " need-" + restriction) : "");
          content = el("span", { class: "restriction", text: restriction !== "." ? restriction : "" });
        } else {
          cls = "die die-" + value[0];
          content = el("span", { class: "pips", text: value[1] });
        }
        grid.append(cellButton(p, cell, issueCells, cls, content, `row ${r + 1} column ${c + 1}: ${value === "." ? "empty" : COLORS[value[0]] + " " + value[1]}`));
      }
    }
    return grid;
  }

  function alhambraBounds(p) {
    const tiles = p.cells.filter((r) => r.value).map((r) => r.cell.split(",").map(Number));
    if (selected && selected.pid === p.id) tiles.push(selected.cell.split(",").map(Number));
    const xs = tiles.map((t) => t[0]).concat([0]), ys = tiles.map((t) => t[1]).concat([0]);
    return { x0: Math.min(...xs) - 1, x1: Math.max(...xs) + 1, y0: Math.min(...ys) - 1, y1: Math.max(...ys) + 1 };
  }

  function alhambraBoard(p) {
    const issueCells = new Set(p.issues.flatMap((i) => i.cells));
    const b = alhambraBounds(p);
    const grid = el("div", { class: "board alhambra", role: "grid", "aria-label": p.name + "'s palace" });
    grid.style.gridTemplateColumns = `repeat(${b.x1 - b.x0 + 1}, var(--tile))`; // CSSOM: allowed by the page's CSP
    for (let y = b.y0; y <= b.y1; y++) {
      for (let x = b.x0; x <= b.x1; x++) {
        const cell = `${x},${y}`;
        const value = cellValue(p, cell) || "";
        const [kind, walls] = value.split(":");
        const cls = value ? "tile type-" + kind + " " + (walls || "").split("").map((w) => "wall-" + w).join(" ") : "empty";
        grid.append(cellButton(p, cell, issueCells, cls, el("span", { text: value ? TYPE_SHORT[kind] || kind : "" }),
          `x ${x} y ${y}: ${value ? kind + (walls ? " walls " + walls : "") : "empty"}`));
      }
    }
    return el("div", { class: "scroll" }, grid);
  }

  function splendorBoard(p) {
    const opts = view.options;
    const grid = el("div", { class: "board splendor", role: "grid", "aria-label": p.name + "'s cards" });
    grid.append(el("span", { class: "corner-label", text: "points →" }), ...opts.splendor_points.map((n) => el("span", { class: "col-label", text: n })));
    for (const colour of opts.splendor_colors) {
      grid.append(el("span", { class: "row-label gem-" + colour, text: colour }));
      for (const points of opts.splendor_points) {
        const cell = `${colour}:${points}`;
        const count = Number(cellValue(p, cell) || 0);
        grid.append(cellButton(p, cell, new Set(), "count gem-" + colour + (count ? "" : " zero"), el("span", { text: count || "·" }),
          `${count} ${colour} card${count === 1 ? "" : "s"} worth ${points}`));
      }
    }
    return grid;
  }

  // ---------------------------------------------------------------- picker

  function renderPalette(p) {
    const cell = selected.cell;
    const value = cellValue(p, cell);
    const pal = el("div", { class: "palette", role: "toolbar", "aria-label": "Set " + cellLabel(cell) });
    pal.append(el("div", { class: "palette-head" }, el("strong", { text: "Set " + cellLabel(cell) }),
      el("button", { type: "button", class: "small", onclick: () => { selected = null; render(); }, text: "Close" })));
    if (view.game === "sagrada") {
      const dice = el("div", { class: "dice-picker" });
      for (const letter of "RYGBP") {
        for (let n = 1; n <= 6; n++) {
          const die = letter + n;
          dice.append(el("button", { type: "button", class: "die die-" + letter + (value === die ? " current" : ""), "data-value": die, "aria-label": COLORS[letter] + " " + n,
            onclick: () => setCell(p.id, cell, die) }, el("span", { class: "pips", text: n })));
        }
      }
      pal.append(dice, el("button", { type: "button", class: "wide", "data-value": ".", onclick: () => setCell(p.id, cell, "."), text: "Empty" }));
    } else if (view.game === "alhambra") {
      const [kind, walls] = (value || "").split(":");
      const types = el("div", { class: "type-picker" },
        el("button", { type: "button", class: "type-fountain" + (kind === "fountain" ? " current" : ""), "data-value": "fountain", onclick: () => setCell(p.id, cell, "fountain"), text: "Fountain" }),
        TYPE_KEYS.map((t, i) => el("button", { type: "button", class: "type-" + t + (kind === t ? " current" : ""), "data-value": t,
          onclick: () => setCell(p.id, cell, t + ":" + (walls || "")) }, `${i + 1} ${t}`)),
        el("button", { type: "button", "data-value": "", onclick: () => setCell(p.id, cell, ""), text: "Empty" }));
      pal.append(types);
      if (kind && kind !== "fountain") {
        pal.append(el("div", { class: "wall-picker" }, el("span", { class: "muted", text: "Walls:" }),
          "NESW".split("").map((side) => el("button", { type: "button", class: "wall" + ((walls || "").includes(side) ? " on" : ""), "aria-pressed": (walls || "").includes(side) ? "true" : "false",
            onclick: () => toggleWall(p, cell, side), text: side }))));
      }
    } else {
      const count = Number(value || 0);
      pal.append(el("div", { class: "count-picker" },
        el("button", { type: "button", onclick: () => setCell(p.id, cell, String(Math.max(0, count - 1))), text: "−" }),
        el("span", { class: "count-value", text: count }),
        el("button", { type: "button", onclick: () => setCell(p.id, cell, String(count + 1)), text: "+" })));
    }
    return pal;
  }

  function toggleWall(p, cell, side) {
    const value = cellValue(p, cell) || "";
    const [kind, walls] = value.split(":");
    if (!kind || kind === "fountain") return;
    const set = new Set((walls || "").split("").filter(Boolean));
    if (set.has(side)) set.delete(side); else set.add(side);
    setCell(p.id, cell, kind + ":" + "NESW".split("").filter((s) => set.has(s)).join(""));
  }

  function select_(pid, cell) {
    selected = { pid, cell };
    pendingColor = null;
    render();
    const button = document.querySelector(`#player-${pid} .board [data-cell="${cell}"]`);
    if (button) button.focus({ preventScroll: false });
  }

  // ---------------------------------------------------------------- keyboard

  function move(dx, dy) {
    if (!selected) return;
    const p = player(selected.pid);
    if (view.game === "splendor") {
      const colours = view.options.splendor_colors, points = view.options.splendor_points;
      const [c, n] = selected.cell.split(":");
      const ci = Math.min(colours.length - 1, Math.max(0, colours.indexOf(c) + dy));
      const ni = Math.min(points.length - 1, Math.max(0, points.indexOf(Number(n)) + dx));
      select_(p.id, `${colours[ci]}:${points[ni]}`);
      return;
    }
    let [a, b] = selected.cell.split(",").map(Number);
    if (view.game === "sagrada") { // (row, col)
      a = Math.min(3, Math.max(0, a + dy)); b = Math.min(4, Math.max(0, b + dx));
    } else { // (x, y)
      a = Math.min(20, Math.max(-20, a + dx)); b = Math.min(20, Math.max(-20, b + dy));
    }
    select_(p.id, `${a},${b}`);
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
    let handled = true;
    if (view.game === "sagrada") {
      const upper = key.toUpperCase();
      if ("RYGBP".includes(upper) && upper.length === 1) {
        if (value && value !== ".") setCell(p.id, cell, upper + value[1]);
        else { pendingColor = upper; notice(`${COLORS[upper]}: now type the value 1–6`); }
      } else if (/^[1-6]$/.test(key)) {
        const color = value && value !== "." ? value[0] : pendingColor;
        if (color) { pendingColor = null; setCell(p.id, cell, color + key); } else notice("type the colour first (R Y G B P)", "warn");
      } else if ([".", "Delete", "Backspace", "0"].includes(key)) setCell(p.id, cell, ".");
      else handled = false;
    } else if (view.game === "alhambra") {
      const [kind, walls] = (value || "").split(":");
      if (/^[1-6]$/.test(key)) setCell(p.id, cell, TYPE_KEYS[Number(key) - 1] + ":" + (kind !== "fountain" ? walls || "" : ""));
      else if (key.toLowerCase() === "f") setCell(p.id, cell, "fountain");
      else if ("nesw".includes(key.toLowerCase()) && key.length === 1) toggleWall(p, cell, key.toUpperCase());
      else if ([".", "Delete", "Backspace", "0"].includes(key)) setCell(p.id, cell, "");
      else handled = false;
    } else {
      const count = Number(value || 0);
      if (key === "+" || key === "=") setCell(p.id, cell, String(count + 1));
      else if (key === "-" || key === "_") setCell(p.id, cell, String(Math.max(0, count - 1)));
      else if (/^[0-9]$/.test(key)) setCell(p.id, cell, key);
      else handled = false;
    }
    if (handled) e.preventDefault();
  });

  // ---------------------------------------------------------------- page

  function render() {
    document.getElementById("game-name").textContent = view.name;
    renderStandings();
    renderSettings();
    renderPlayers();
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
  setInterval(refresh, 4000);

  render();
  window.tablescanView = () => view; // for tests and debugging
})();
