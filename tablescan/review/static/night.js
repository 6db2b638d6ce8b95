// tablescan review: managing the game night, for every game: undo and redo (buttons, Ctrl+Z and
// Ctrl+Shift+Z), renaming and deleting the game, adding and removing players, the results to take
// away, and the QR code phones join by. It draws #night from the page's view on every render.
(function () {
  "use strict";

  window.tablescan.extend((ui) => {
    const { el, api, base, notice } = ui;
    const box = () => document.getElementById("night");
    const nightOpen = () => { const d = box().querySelector("details.manage"); return d ? d.open : false; };

    const undo = () => api("POST", base() + "/undo");
    const redo = () => api("POST", base() + "/redo");

    document.addEventListener("keydown", (e) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || (e.key || "").toLowerCase() !== "z" && (e.key || "").toLowerCase() !== "y") return;
      const tag = (e.target.tagName || "").toLowerCase();
      if (tag === "input" || tag === "textarea" || tag === "select") return; // the field's own undo
      e.preventDefault();
      if (e.shiftKey || (e.key || "").toLowerCase() === "y") redo(); else undo();
    });

    function removePlayer(p) {
      if (!window.confirm(`Remove ${p.name} from this game? Their board, photo and corrections are kept: Undo brings them back.`)) return;
      api("DELETE", base() + "/players/" + p.id);
    }

    async function deleteGame(view) {
      if (!window.confirm(`Delete "${view.name}"? The games list offers to bring it back for a while; nothing is lost.`)) return;
      const response = await fetch(base(), { method: "DELETE", headers: { Accept: "application/json" } });
      if (response.ok) { window.location.href = "/"; return; }
      let data = {};
      try { data = await response.json(); } catch (error) { /* not JSON */ }
      notice(data.error || "could not delete the game", "bad");
    }

    return (view) => {
      const node = box();
      if (!node) return;
      const open = nightOpen();
      const history = view.history || {};
      const addName = el("input", { class: "add-player-name", maxlength: 40, placeholder: "name", "aria-label": "New player's name" });
      const addPlayer = () => {
        const name = addName.value.trim();
        if (!name) { addName.focus(); return; }
        api("POST", base() + "/players", { name });
      };
      addName.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); addPlayer(); } });
      const keys = document.getElementById("shortcuts"); // the page's key list, drawn afresh on each render
      if (keys) keys.append(el("dt", { text: "Ctrl+Z" }), el("dd", { text: "undo the last change (any phone's)" }),
        el("dt", { text: "Ctrl+Shift+Z" }), el("dd", { text: "redo it" }));
      const join = node.dataset.join;
      node.replaceChildren(
        el("div", { class: "row night-bar" },
          el("button", { type: "button", class: "undo", disabled: history.undo ? null : true, onclick: undo,
            title: "Ctrl+Z", "aria-label": history.undo ? "Undo: " + history.undo : "Nothing to undo" }, "↶ Undo", history.undo ? el("span", { class: "muted small", text: " " + history.undo }) : null),
          el("button", { type: "button", class: "redo", disabled: history.redo ? null : true, onclick: redo,
            title: "Ctrl+Shift+Z", "aria-label": history.redo ? "Redo: " + history.redo : "Nothing to redo" }, "↷ Redo"),
          el("span", { class: "exports" }, "Results: ",
            el("a", { href: `/games/${view.id}/results.csv`, download: "", class: "export-csv" }, "CSV"), " · ",
            el("a", { href: `/games/${view.id}/results.png`, download: "", class: "export-png" }, "image"))),
        el("details", { class: "manage", open: open ? true : null },
          el("summary", { text: "Manage the game: name, players, delete" + (join ? ", phones" : "") }),
          el("label", { class: "field" }, "Game name",
            el("input", { class: "game-name-input", value: view.name, maxlength: 60, "aria-label": "Game name",
              onchange: (e) => api("PATCH", base(), { name: e.target.value }) })),
          el("div", { class: "night-players" }, el("span", { class: "muted", text: "Players: " }),
            view.players.map((p) => el("span", { class: "night-player" }, p.name, " ",
              el("button", { type: "button", class: "small remove-player", "aria-label": "Remove " + p.name, onclick: () => removePlayer(p) }, "Remove")))),
          el("div", { class: "row" }, addName, el("button", { type: "button", class: "add-player", onclick: addPlayer }, "Add player")),
          (view.removed_players || []).length ? el("div", { class: "night-removed" }, el("span", { class: "muted", text: "Removed: " }),
            view.removed_players.map((p) => el("span", { class: "night-player" }, p.name, " ",
              el("button", { type: "button", class: "small restore-player", "aria-label": "Bring " + p.name + " back",
                onclick: () => api("POST", base() + "/players/" + p.id + "/restore") }, "Bring back")))) : null,
          join ? el("div", { class: "join" }, el("p", { class: "muted small", text: "Phones on the same network join by scanning this:" }),
            el("img", { src: "/join.png", alt: "QR code of the address phones join by", width: 200, height: 200 }),
            el("p", { class: "small" }, el("code", { text: join }))) : null,
          el("p", {}, el("button", { type: "button", class: "danger delete-game", onclick: () => deleteGame(view) }, "Delete this game"))));
    };
  });
})();
