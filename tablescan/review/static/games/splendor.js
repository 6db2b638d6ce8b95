// tablescan review: Splendor's page hooks (scoring only). A card count per "colour:points" cell;
// colours and points are the view's option lists, the field limits the form's constants.
(function () {
  "use strict";

  window.tablescan.register("splendor", (ui) => {
    const { el, numberInput, cellButton, setCell, patchFields } = ui;
    const k = () => ui.view().form.constants;
    const opts = () => ui.view().options;
    const count = (value) => Number(value || 0);

    function settings() {
      return [el("p", { class: "muted", text: "Splendor has no game settings: enter each player's cards and nobles below." })];
    }

    function fields(p) {
      const f = p.fields;
      const chosen = Array.isArray(f.nobles) ? f.nobles : [];
      const nodes = [];
      if (!chosen.length) {
        // nobles score: "not set" until entered (0 is a value the players give), never a silent 0
        const unset = f.nobles === null || f.nobles === undefined || f.nobles === "";
        const node = numberInput("Nobles", unset ? "" : f.nobles, (v) => patchFields(p.id, { nobles: v }), { max: k().max_nobles, placeholder: "not set" });
        if (unset) node.classList.add("unset");
        nodes.push(node);
      }
      nodes.push(numberInput("Reserved cards", f.reserved, (v) => patchFields(p.id, { reserved: v }), { max: k().max_reserved }));
      nodes.push(el("details", { class: "nobles", open: chosen.length ? true : null },
        el("summary", { text: chosen.length ? `Nobles: ${chosen.join(", ")}` : "Or pick which nobles (checks their requirements)" }),
        el("div", { class: "noble-list" }, opts().nobles.map((n) => el("label", { class: "noble" },
          el("input", { type: "checkbox", checked: chosen.includes(n.id) ? true : null, onchange: (e) => {
            const next = e.target.checked ? chosen.concat([n.id]) : chosen.filter((x) => x !== n.id);
            patchFields(p.id, { nobles: next.length ? next : 0 });
          } }), ` ${n.id}: ${n.label}`)))));
      return nodes;
    }

    function board(p) {
      const grid = el("div", { class: "board splendor", role: "grid", "aria-label": p.name + "'s cards" });
      grid.append(el("span", { class: "corner-label", text: "points →" }), ...opts().splendor_points.map((n) => el("span", { class: "col-label", text: n })));
      for (const colour of opts().splendor_colors) {
        grid.append(el("span", { class: "row-label gem-" + colour, text: colour }));
        for (const points of opts().splendor_points) {
          const cell = `${colour}:${points}`;
          const n = count(ui.cellValue(p, cell));
          grid.append(cellButton(p, cell, new Set(), "count gem-" + colour + (n ? "" : " zero"), el("span", { text: n || "·" }),
            `${n} ${colour} card${n === 1 ? "" : "s"} worth ${points}`));
        }
      }
      return grid;
    }

    function picker(p, cell, value) {
      const n = count(value);
      return [el("div", { class: "count-picker" },
        el("button", { type: "button", onclick: () => setCell(p.id, cell, String(Math.max(0, n - 1))), text: "−" }),
        el("span", { class: "count-value", text: n }),
        el("button", { type: "button", onclick: () => setCell(p.id, cell, String(n + 1)), text: "+" }))];
    }

    function move(cell, dx, dy) { // rows are colours, columns points
      const colours = opts().splendor_colors, points = opts().splendor_points;
      const [c, n] = cell.split(":");
      const ci = Math.min(colours.length - 1, Math.max(0, colours.indexOf(c) + dy));
      const ni = Math.min(points.length - 1, Math.max(0, points.indexOf(Number(n)) + dx));
      return `${colours[ci]}:${points[ni]}`;
    }

    function key(key, p, cell, value) {
      const n = count(value);
      if (key === "+" || key === "=") setCell(p.id, cell, String(n + 1));
      else if (key === "-" || key === "_") setCell(p.id, cell, String(Math.max(0, n - 1)));
      else if (/^[0-9]$/.test(key)) setCell(p.id, cell, key);
      else return false;
      return true;
    }

    return { settings, fields, board, picker, move, key, cellLabel: (cell) => cell.replace(":", " ") + "pt" };
  });
})();
