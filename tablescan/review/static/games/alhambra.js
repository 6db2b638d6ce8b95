// tablescan review: Alhambra's page hooks. A palace grid around the fountain; cells "x,y" (y grows south),
// values "fountain", "garden:NS" or "". Tile types, sides and limits come from the form's constants.
(function () {
  "use strict";

  window.tablescan.register("alhambra", (ui) => {
    const { el, select, numberInput, cellButton, setCell, patchSettings, patchFields } = ui;
    const k = () => ui.view().form.constants;
    const round = () => ui.view().settings.scoring_round || 1;
    const isFinal = () => round() === ui.view().form.last_round;
    const roundLabel = (n, last) => (n === last ? `${n} (final)` : `${n} (${["first", "second", "third", "fourth"][n - 1] || "#" + n} scoring card)`);

    // a text field whose refusal shows beside it (ui.fieldChange), the text left as typed
    function textField(label, value, send, attrs) {
      const field = el("label", { class: "field" }, label);
      const input = el("input", Object.assign({ value, onchange: (e) => ui.fieldChange(field, input, () => send(e.target.value)) }, attrs));
      field.append(input);
      return field;
    }

    function settings() {
      const view = ui.view(), s = view.settings, opts = view.options, last = view.form.last_round;
      const rounds = [...Array(last).keys()].map((i) => [String(i + 1), roundLabel(i + 1, last)]);
      const nodes = [el("div", { class: "row" },
        select("Scoring round", rounds, String(round()), (value) => patchSettings({ scoring_round: Number(value) }), { id: "scoring-round" }))];
      if (view.players.length === 2 && s.dirk) {
        nodes.push(el("h3", { text: "Dirk's buildings (2-player game)" }),
          el("div", { class: "row" }, opts.tile_types.map((t) => {
            // a count nobody entered is "not set" (the standings wait for it), never a silent 0
            const unset = s.dirk[t] === null || s.dirk[t] === undefined;
            // only this type's count is sent (the others keep theirs), so quick edits of two fields both stay
            const node = numberInput(t, unset ? "" : s.dirk[t], (value) => patchSettings({ dirk: { [t]: value } }),
              { max: k().max_dirk, placeholder: "not set" });
            if (unset) node.classList.add("unset");
            return node;
          })));
      }
      if (isFinal()) {
        const market = s.market || [];
        const save = (next) => patchSettings({ market: next });
        const edit = (i, change) => save(market.map((t, j) => (j === i ? Object.assign({}, t, change) : t)));
        nodes.push(el("h3", { text: "Market tiles left for the final scoring" }),
          el("div", { class: "market" }, market.map((tile, i) => el("div", { class: "row" },
            select("Currency", opts.currencies.map((c) => [c, c]), tile.currency, (v) => edit(i, { currency: v })),
            select("Type", opts.tile_types.map((c) => [c, c]), tile.type, (v) => edit(i, { type: v })),
            textField("Walls", tile.walls, (v) => edit(i, { walls: v }), { size: 4, maxlength: 4 }),
            el("button", { type: "button", class: "small", onclick: () => save(market.filter((_, j) => j !== i)), text: "Remove" })))),
          el("div", {}, market.length < k().market_size ? el("button", { type: "button", class: "small", onclick: () => save(market.concat([Object.assign({}, k().market_tile)])), text: "Add a market tile" }) : null));
        nodes.push(el("p", { class: "muted", text: "Each player's money is entered beside their palace." }));
      }
      return nodes;
    }

    // none before the first scoring; from a later one on, "not set" until a recorded round carries them or they are typed
    function pointsBefore(p) {
      const value = p.fields.score_before, unset = value === null || value === undefined || value === "";
      const later = round() > 1;
      const node = numberInput("Points before this scoring", unset ? (later ? "" : 0) : value, (v) => patchFields(p.id, { score_before: v }),
        { max: k().max_score_before, placeholder: "not set" });
      if (unset && later) node.classList.add("unset");
      return node;
    }

    function fields(p) {
      const f = p.fields, opts = ui.view().options;
      const nodes = [
        pointsBefore(p),
        textField("Reserve (never scores)", (f.reserve || []).join(", "), (v) => patchFields(p.id, { reserve: v }), { placeholder: "garden:N, tower:ES", size: 16 }),
      ];
      if (isFinal()) {
        for (const c of opts.currencies) {
          nodes.push(numberInput(c, (f.money || {})[c], (v) => patchFields(p.id, { money: Object.assign({}, f.money, { [c]: v }) }), { max: k().max_money }));
        }
      }
      return nodes;
    }

    function notes(report) {
      const nodes = [];
      if (report.dirk) {
        const dirk = report.dirk;
        nodes.push(el("p", { class: "muted" }, "Dirk: " + (dirk.round_points ?? 0) + " points (" +
          (Object.entries(dirk.majorities || {}).map(([t, v]) => t + " " + v).join(", ") || "no majorities") + ")"));
      }
      if (report.market_awards && report.market_awards.length) {
        nodes.push(el("p", { class: "muted" }, "Market: " + report.market_awards.map((a) =>
          `${a.type}${a.walls ? " (" + a.walls + ")" : ""} for ${a.currency} → ${a.to ?? "nobody"}`).join("; ")));
      }
      return nodes;
    }

    function evidence(p) {
      const wall = (p.evidence || {}).wall || [];
      if (!wall.length) return [];
      return [el("p", { class: "muted small" }, el("span", { class: "wall-key" }), ` longest wall: ${wall.length} segment${wall.length === 1 ? "" : "s"}, drawn in orange`)];
    }

    function bounds(p) {
      const selected = ui.selected();
      const tiles = p.cells.filter((r) => r.value).map((r) => r.cell.split(",").map(Number));
      if (selected && selected.pid === p.id) tiles.push(selected.cell.split(",").map(Number));
      const xs = tiles.map((t) => t[0]).concat([0]), ys = tiles.map((t) => t[1]).concat([0]);
      return { x0: Math.min(...xs) - 1, x1: Math.max(...xs) + 1, y0: Math.min(...ys) - 1, y1: Math.max(...ys) + 1 };
    }

    function board(p) {
      const issueCells = ui.issueCells(p);
      const longWall = (p.evidence || {}).wall || [];
      const b = bounds(p);
      const grid = el("div", { class: "board alhambra", role: "grid", "aria-label": p.name + "'s palace" });
      grid.style.gridTemplateColumns = `repeat(${b.x1 - b.x0 + 1}, var(--tile))`; // CSSOM: allowed by the page's CSP
      for (let y = b.y0; y <= b.y1; y++) {
        for (let x = b.x0; x <= b.x1; x++) {
          const cell = `${x},${y}`;
          const value = ui.cellValue(p, cell) || "";
          const [kind, walls] = value.split(":");
          const cls = value ? "tile type-" + kind + " " + (walls || "").split("").map((w) => "wall-" + w).join(" ") : "empty";
          grid.append(cellButton(p, cell, issueCells, cls, el("span", { text: value ? k().short[kind] || kind : "" }),
            `${tileName(cell, p)}: ${valueName(value)}`,
            longWall.filter((w) => w.cell === cell).map((w) => "lw-" + w.side).join(" ")));
        }
      }
      return el("div", { class: "scroll" }, grid, el("p", { class: "muted small compass", text: "North is up, east is right: tiles are named from the fountain." }));
    }

    function toggleWall(p, cell, side) {
      const value = ui.cellValue(p, cell) || "";
      const [kind, walls] = value.split(":");
      if (!kind || kind === k().fountain) return;
      const set = new Set((walls || "").split("").filter(Boolean));
      if (set.has(side)) set.delete(side); else set.add(side);
      setCell(p.id, cell, kind + ":" + k().sides.split("").filter((s) => set.has(s)).join(""));
    }

    function picker(p, cell, value) {
      const [kind, walls] = (value || "").split(":");
      const fountain = k().fountain;
      const nodes = [el("div", { class: "type-picker" },
        el("button", { type: "button", class: "type-" + fountain + (kind === fountain ? " current" : ""), "data-value": fountain, onclick: () => setCell(p.id, cell, fountain), text: "Fountain" }),
        k().types.map((t, i) => el("button", { type: "button", class: "type-" + t + (kind === t ? " current" : ""), "data-value": t,
          onclick: () => setCell(p.id, cell, t + ":" + (walls || "")) }, `${i + 1} ${t}`)),
        el("button", { type: "button", "data-value": "", onclick: () => setCell(p.id, cell, ""), text: "Empty" }))];
      if (kind && kind !== fountain) {
        nodes.push(el("div", { class: "wall-picker" }, el("span", { class: "muted", text: "Walls:" }),
          k().sides.split("").map((side) => el("button", { type: "button", class: "wall" + ((walls || "").includes(side) ? " on" : ""), "aria-pressed": (walls || "").includes(side) ? "true" : "false",
            onclick: () => toggleWall(p, cell, side), text: side }))));
      }
      return nodes;
    }

    function move(cell, dx, dy) { // (x, y)
      const [x, y] = cell.split(",").map(Number), reach = k().reach;
      return `${Math.min(reach, Math.max(-reach, x + dx))},${Math.min(reach, Math.max(-reach, y + dy))}`;
    }

    function key(key, p, cell, value) {
      const [kind, walls] = (value || "").split(":");
      const types = k().types, number = /^[0-9]$/.test(key) ? Number(key) : 0;
      if (number >= 1 && number <= types.length) setCell(p.id, cell, types[number - 1] + ":" + (kind !== k().fountain ? walls || "" : ""));
      else if (key.toLowerCase() === k().fountain[0]) setCell(p.id, cell, k().fountain);
      else if (key.length === 1 && k().sides.includes(key.toUpperCase())) toggleWall(p, cell, key.toUpperCase());
      else if ([".", "Delete", "Backspace", "0"].includes(key)) setCell(p.id, cell, "");
      else return false;
      return true;
    }

    function shortValue(value) {
      if (!value) return "";
      const [kind, walls] = value.split(":");
      return (k().short[kind] || kind) + (walls ? " " + walls : "");
    }

    // where a tile stands, in words, counted from the player's fountain (as the scanner's verdict names tiles):
    // "2 east, 1 south of the fountain"; north is up and east is right, as the palace stands upright
    function tileName(cell, p) {
      const fountain = p && p.cells.find((r) => r.value === k().fountain);
      const [fx, fy] = fountain ? fountain.cell.split(",").map(Number) : [0, 0];
      const [x, y] = cell.split(",").map(Number);
      const dx = x - fx, dy = y - fy, steps = [];
      if (dx) steps.push(`${Math.abs(dx)} ${dx > 0 ? "east" : "west"}`);
      if (dy) steps.push(`${Math.abs(dy)} ${dy > 0 ? "south" : "north"}`);
      return steps.length ? steps.join(", ") + " of the fountain" : "the fountain";
    }

    function valueName(value) {
      if (!value) return "empty";
      const [kind, walls] = value.split(":");
      if (kind === k().fountain) return "fountain";
      return kind + (walls ? " walled " + walls.split("").join(" ") : ", no walls");
    }

    // the scoring core names a tile by its grid place, "(2, 0)"; the page names it from the fountain, as everywhere here
    function issueDetail(issue, p) {
      return issue.detail.replace(/(space at )?\((-?\d+), (-?\d+)\)/g, (_, space, x, y) => {
        const name = tileName(`${x},${y}`, p);
        if (name === "the fountain") return space ? "space at the fountain" : name;
        return (space ? "space " : "the tile ") + name;
      });
    }

    return { settings, fields, notes, evidence, board, picker, move, key, shortValue, valueName, issueDetail, cellLabel: tileName };
  });
})();
