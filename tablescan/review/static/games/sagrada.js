// tablescan review: Sagrada's page hooks. A 4 x 5 window of dice; cells "row,col", values "B4" or ".".
// Colours, values, window size and limits come from the form's constants in the view JSON.
(function () {
  "use strict";

  window.tablescan.register("sagrada", (ui) => {
    const { el, select, numberInput, cellButton, setCell, patchSettings, patchFields, notice } = ui;
    const k = () => ui.view().form.constants;
    let pendingColor = null; // a colour typed on an empty cell, waiting for its value

    const isDie = (value) => Boolean(value) && value !== ".";
    const isValue = (key) => k().values.map(String).includes(key);
    const valueRange = () => `${k().values[0]}–${k().values[k().values.length - 1]}`;

    function settings() {
      const view = ui.view(), s = view.settings, opts = view.options, solo1 = view.players.length === 1;
      const chosen = s.public_objectives || [];
      const slots = [...Array(solo1 ? k().solo_public_slots : k().public_slots).keys()];
      // the cards the table turned up: "not set" until chosen (the standings wait for them), never a guess
      const nodes = [el("div", { class: "row" }, slots.map((i) => {
        const node = select("Public objective " + (i + 1),
          [["", "— not set —"]].concat(opts.public_objectives.map((o) => [o, ui.words(o)])), chosen[i] || "", (value) => {
            // read the other slots as shown, not as last rendered: a quick second choice must not undo the first
            const shown = [...document.querySelectorAll("#settings select[data-objective]")].map((node) => node.value);
            const next = slots.map((j) => (j === i ? value : shown[j] ?? chosen[j] ?? "")).filter(Boolean);
            return patchSettings({ public_objectives: next });
          }, { "data-objective": i });
        if (!chosen[i]) node.classList.add("unset");
        return node;
      }))];
      if (solo1) {
        // the two drawn private objectives and the round track's sum: "not set" until entered, never dealt by the screen
        const solo = s.solo || k().solo;
        const marked = (node, isUnset) => { if (isUnset) node.classList.add("unset"); return node; };
        const trackUnset = solo.round_track_sum === null || solo.round_track_sum === undefined;
        nodes.push(el("div", { class: "row" },
          solo.private_objectives.map((colour, i) => marked(select("Private objective " + (i + 1), [["", "— not set —"]].concat(opts.colors.map((c) => [c, c])), colour || "", (value) => {
            const shown = [...document.querySelectorAll("#settings select[data-solo-private]")].map((node) => node.value || null);
            const privates = solo.private_objectives.map((c, j) => (j === i ? value || null : shown[j] ?? c));
            return patchSettings({ solo: { private_objectives: privates } });
          }, { "data-solo-private": i }), !colour)),
          marked(numberInput("Round track sum", trackUnset ? "" : solo.round_track_sum, (value) =>
            patchSettings({ solo: { round_track_sum: value } }), { placeholder: "not set" }), trackUnset)));
      }
      return nodes;
    }

    function fields(p) {
      const view = ui.view(), f = p.fields, opts = view.options, nodes = [];
      if (view.players.length > 1) {
        // a value nobody entered shows as "not set" (and the standings wait for it), never as a default
        const unset = (node, isUnset) => { if (isUnset) node.classList.add("unset"); return node; };
        nodes.push(unset(select("Private objective", [["", "— not set —"]].concat(opts.colors.map((c) => [c, c])), f.private_objective || "",
          (v) => patchFields(p.id, { private_objective: v || null })), !f.private_objective));
        const tokensUnset = f.favor_tokens === null || f.favor_tokens === undefined || f.favor_tokens === "";
        nodes.push(unset(numberInput("Favor tokens left", tokensUnset ? "" : f.favor_tokens, (v) => patchFields(p.id, { favor_tokens: v }),
          { max: k().max_favor_tokens, placeholder: "not set" }), tokensUnset));
      }
      nodes.push(select("Window pattern", [["", "— none —"]].concat(opts.patterns.map((x) => [x.name, x.name + " (" + x.difficulty + ")"])),
        f.pattern || "", (v) => patchFields(p.id, { pattern: v || null })));
      return nodes;
    }

    function summary(report) {
      if (!report.solo) return [];
      if ((ui.view().incomplete || []).length) return []; // won or lost is only said once the setup is all entered
      return [el("p", { class: report.solo.won ? "good" : "bad" }, `Solo target ${report.solo.target}: ${report.solo.won ? "won" : "lost"}`)];
    }

    function evidence(p) {
      const objectives = (p.evidence || {}).objectives || [];
      if (!objectives.length) return [];
      const highlight = ui.highlight();
      return [
        el("div", { class: "muted small", text: "Where the points come from (tap to show the dice):" }),
        el("div", { class: "objective-list" }, objectives.map((o) => {
          const cells = new Set(o.units.flatMap((u) => u.cells));
          const on = highlight && highlight.pid === p.id && highlight.id === o.id;
          return el("button", { type: "button", class: "chip objective" + (on ? " on" : ""), "aria-pressed": on ? "true" : "false",
            title: o.units.map((u) => u.label).join("; ") + (o.note ? " (" + o.note + ")" : ""),
            onclick: () => ui.setHighlight(on ? null : { pid: p.id, id: o.id, cells }) },
          el("span", { text: o.id }), " ", el("strong", { text: o.points }));
        })),
      ];
    }

    // a die's face: its colour letter as well as its colour, then its pips, so no die is told by colour alone
    function face(letter, n) {
      return [el("span", { class: "die-letter", "aria-hidden": "true", text: letter }), el("span", { class: "pips", text: n })];
    }

    function board(p) {
      const issueCells = ui.issueCells(p);
      const grid = el("div", { class: "board sagrada", role: "grid", "aria-label": p.name + "'s window" });
      for (let r = 0; r < k().rows; r++) {
        for (let c = 0; c < k().cols; c++) {
          const cell = `${r},${c}`;
          const value = ui.cellValue(p, cell) || ".";
          const restriction = p.pattern_grid ? p.pattern_grid[r][c] : ".";
          let content, cls;
          if (value === ".") {
            cls = "empty" + (restriction !== "." ? (isValue(restriction) ? " need-value" : " need-" + restriction) : "");
            content = el("span", { class: "restriction", text: restriction !== "." ? restriction : "" });
          } else {
            cls = "die die-" + value[0];
            content = face(value[0], value[1]);
          }
          grid.append(cellButton(p, cell, issueCells, cls, content, `row ${r + 1} column ${c + 1}: ${value === "." ? "empty" : k().colors[value[0]] + " " + value[1]}`));
        }
      }
      return grid;
    }

    function picker(p, cell, value) {
      const dice = el("div", { class: "dice-picker" });
      for (const [letter, name] of Object.entries(k().colors)) {
        for (const n of k().values) {
          const die = letter + n;
          dice.append(el("button", { type: "button", class: "die die-" + letter + (value === die ? " current" : ""), "data-value": die, "aria-label": name + " " + n,
            onclick: () => setCell(p.id, cell, die) }, face(letter, n)));
        }
      }
      return [dice, el("button", { type: "button", class: "wide", "data-value": ".", onclick: () => setCell(p.id, cell, "."), text: "Empty" })];
    }

    function move(cell, dx, dy) { // (row, col)
      const [r, c] = cell.split(",").map(Number);
      return `${Math.min(k().rows - 1, Math.max(0, r + dy))},${Math.min(k().cols - 1, Math.max(0, c + dx))}`;
    }

    function key(key, p, cell, value) {
      const upper = key.toUpperCase();
      if (upper.length === 1 && Object.hasOwn(k().colors, upper)) {
        if (isDie(value)) setCell(p.id, cell, upper + value[1]);
        else { pendingColor = upper; notice(`${k().colors[upper]}: now type the value ${valueRange()}`); }
      } else if (isValue(key)) {
        const color = isDie(value) ? value[0] : pendingColor;
        if (color) { pendingColor = null; setCell(p.id, cell, color + key); } else notice(`type the colour first (${Object.keys(k().colors).join(" ")})`, "warn");
      } else if ([".", "Delete", "Backspace", "0"].includes(key)) setCell(p.id, cell, ".");
      else return false;
      return true;
    }

    return {
      settings, fields, summary, evidence, board, picker, move, key,
      valueName: (value) => (isDie(value) ? `${k().colors[value[0]]} ${value[1]}` : "empty"),
      cellLabel: (cell) => { const [r, c] = cell.split(","); return `r${Number(r) + 1}c${Number(c) + 1}`; },
      onSelect: () => { pendingColor = null; },
    };
  });
})();
