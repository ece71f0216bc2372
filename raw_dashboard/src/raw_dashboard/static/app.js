// The dashboard's page: sessions, one session's history and live turn, pending requests,
// panels, preferences. It talks only to this server's API (docs/dashboard.md); the cookie
// carries the token, so no script ever sees it.
"use strict";

(() => {
  const { el, render } = Blocks;
  const $ = (id) => document.getElementById(id);
  const state = {
    session: null, source: null, seen: new Set(), older: null, running: false,
    requests: new Map(), panels: new Map(), calls: new Map(), draft: null,
  };

  async function api(method, path, body) {
    const response = await fetch(path, {
      method, headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) {
      const error = (data && data.error) || { code: "http_" + response.status, message: "" };
      throw Object.assign(new Error(error.message), { code: error.code });
    }
    return data;
  }

  // A failed call the page did not wait for; requests cut short by leaving the page are
  // not failures.
  function report(error) {
    if (!state.leaving) banner(`${error.code || "error"}: ${error.message}`, "error");
  }

  function banner(text, kind) {
    const box = $("banner");
    box.hidden = !text;
    box.textContent = text || "";
    box.className = "banner " + (kind || "");
  }

  function status() {
    $("status").textContent = state.session
      ? (state.running ? "turn running here" : "idle") : "";
    $("cancel").disabled = !state.running;
  }

  // --- sessions ---------------------------------------------------------------------------

  async function loadSessions() {
    const { sessions } = await api("GET", "/api/sessions?limit=100");
    const list = $("sessions");
    list.replaceChildren();
    for (const s of sessions) {
      const when = new Date(s.last_activity).toLocaleString();
      const item = el("li", { class: s.id === state.session ? "current" : "", "data-id": s.id },
        el("div", { class: "title", text: s.title || "(untitled)" }),
        el("div", { class: "meta", text: when + (s.cwd ? " · " + s.cwd : "") + (s.running ? " · running" : "") }));
      item.addEventListener("click", () => openSession(s.id).catch(report));
      list.append(item);
    }
  }

  async function openSession(id) {
    if (state.source) state.source.close();
    delete document.body.dataset.synced;
    Object.assign(state, { session: id, seen: new Set(), requests: new Map(), panels: new Map(),
      calls: new Map(), draft: null, older: null });
    history.replaceState(null, "", "#" + id);
    $("log").replaceChildren();
    banner("");
    const info = await api("GET", `/api/sessions/${id}`);
    state.running = info.running;
    for (const update of info.panels) showPanel(update);
    setRequests(info.requests);
    const page = await api("GET", `/api/sessions/${id}/items?order=newest&limit=50`);
    $("log").prepend(...page.items.slice().reverse().map(itemNode));
    state.older = page.has_more ? page.next_cursor : null;
    $("older").hidden = !state.older;
    follow(info.tail_cursor);
    scrollDown();
    status();
    loadSessions().catch(report);
  }

  async function showOlder() {
    const page = await api("GET",
      `/api/sessions/${state.session}/items?order=newest&limit=50&cursor=${encodeURIComponent(state.older)}`);
    $("log").prepend(...page.items.slice().reverse().map(itemNode));
    state.older = page.has_more ? page.next_cursor : null;
    $("older").hidden = !state.older;
  }

  function follow(cursor) {
    const source = new EventSource(`/api/sessions/${state.session}/events?cursor=${encodeURIComponent(cursor)}`);
    state.source = source;
    source.onmessage = (message) => onEvent(JSON.parse(message.data));
  }

  // --- what arrives -----------------------------------------------------------------------

  function onEvent(event) {
    if (event.type === "item") {
      const node = itemNode(event.item);
      if (node.childNodes.length || node.className) {
        if (event.item.kind === "message" && event.item.message.role === "assistant") clearDraft();
        $("log").append(node);
        scrollDown();
        if (!state.running) banner("another front end is writing to this session: watching", "info");
      }
    } else if (event.type === "live") onLive(event.event);
    else if (event.type === "requests") {
      setRequests(event.requests);
      document.body.dataset.synced = "true"; // the stream's view of the requests is in
    }
    else if (event.type === "status") {
      state.running = event.running;
      if (event.error) banner(`${event.error.code}: ${event.error.message}`, "error");
      status();
    } else if (event.type === "error") banner(`${event.error.code}: ${event.error.message}`, "error");
  }

  function onLive(event) {
    if (event.type === "turn_started") { state.running = true; banner(""); status(); }
    else if (event.type === "text_delta") {
      if (!state.draft) { state.draft = el("div", { class: "msg assistant draft" }); $("log").append(state.draft); }
      state.draft.textContent += event.text;
      scrollDown();
    } else if (event.type === "approval_requested") {
      state.requests.set(event.request_id, { id: event.request_id, kind: "approval", show: event });
      drawRequests();
    } else if (event.type === "interaction_requested") {
      state.requests.set(event.request_id, { id: event.request_id, kind: "interaction",
        show: { identity: event.identity, panel: event.panel, document: event.document } });
      drawRequests();
    } else if (event.type === "approval_answered" || event.type === "interaction_ended") {
      state.requests.delete(event.request_id); drawRequests();
    } else if (event.type === "tool_call_finished") {
      const call = state.calls.get(event.tool_call_id);
      if (call && event.effects !== null) {
        call.querySelector(".effects").replaceChildren(el("details", {},
          el("summary", { text: "intended effects" }), effectsNode(event.effects)));
      }
    } else if (event.type === "panel_updated") {
      if (!event.error) showPanel(event);
    } else if (event.type === "compaction_ended") {
      $("log").append(el("div", { class: "turn-end", text: "context compacted: " + (event.outcome || event.state || "") }));
    } else if (event.type === "turn_ended") {
      clearDraft();
      state.running = false;
      status();
      const note = event.error ? `${event.reason}: ${event.error.code} ${event.error.message}` : event.reason;
      $("log").append(el("div", { class: "turn-end", "data-reason": event.reason, text: "turn ended: " + note }));
      loadSessions().catch(report);
    }
  }

  function scrollDown() { const log = $("log"); log.scrollTop = log.scrollHeight; }

  function clearDraft() { if (state.draft) { state.draft.remove(); state.draft = null; } }

  function effectsNode(effects) {
    if (effects === null || effects === undefined) return el("span", { class: "none", text: "no declared effects" });
    return el("pre", { text: JSON.stringify(effects, null, 2) });
  }

  function blocksText(content) {
    return (content || []).map((b) => b.type === "text" ? b.text
      : b.type === "json" ? b.json_text : `[${b.type}]`).join("\n");
  }

  function itemNode(item) {
    if (state.seen.has(item.seq)) return el("span");
    state.seen.add(item.seq);
    if (item.kind === "panel") {
      if (!item.error) showPanel(item);
      return el("span");
    }
    if (item.kind === "request") {
      if (item.state === "pending") return el("span"); // waiting: shown as a request card
      const show = item.show || {};
      const by = item.answer ? ` by ${item.answer.by}` : "";
      if (item.request_kind === "interaction") {
        const values = item.answer && item.answer.values;
        return el("div", { class: "answered-form state-" + item.state },
          el("div", { text: `${show.identity} asked a form: ${item.state}${by}` }),
          values ? el("pre", { text: JSON.stringify(values, null, 2) }) : null);
      }
      const said = item.answer && item.answer.message ? `: ${item.answer.message}` : "";
      return el("div", { class: "approval state-" + item.state },
        el("div", { text: `${show.identity}: ${item.state}${by}${said}` }),
        el("details", {}, el("summary", { text: "intended effects" }), effectsNode(show.effects)));
    }
    if (item.kind === "tool_output") {
      return el("details", { class: "tool-output" }, el("summary", { text: "full output" + (item.truncated ? " (truncated)" : "") }),
        el("pre", { text: blocksText(item.content) }));
    }
    const message = item.message;
    if (item.kind !== "message" || !message) {
      return el("pre", { class: "msg other", text: JSON.stringify(item, null, 2) });
    }
    if (message.role === "user") return el("div", { class: "msg user", text: blocksText(message.content) });
    if (message.role === "assistant") {
      const box = el("div", { class: "msg assistant" });
      if (message.text) box.append(el("div", { class: "text", text: message.text }));
      for (const call of message.tool_calls || []) {
        const node = el("div", { class: "call", "data-call": call.id },
          el("div", { class: "name", text: "→ " + call.name }),
          el("details", {}, el("summary", { text: "arguments" }), el("pre", { text: prettyJson(call.arguments) })),
          el("div", { class: "effects" }));
        state.calls.set(call.id, node);
        box.append(node);
      }
      return box;
    }
    if (message.role === "tool") {
      const call = state.calls.get(message.tool_call_id);
      const result = el("div", { class: "result status-" + message.status },
        el("pre", { text: blocksText(message.content) }));
      if (call) { call.append(result); return el("span"); }
      return result;
    }
    return el("pre", { class: "msg other", text: JSON.stringify(message, null, 2) });
  }

  function prettyJson(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
  }

  // --- requests ---------------------------------------------------------------------------

  function setRequests(requests) {
    state.requests = new Map(requests.map((r) => [r.id, r]));
    drawRequests();
  }

  // Cards are kept while their request waits: a redraw must not wipe what the person is
  // typing into a form or a decline message.
  function drawRequests() {
    const box = $("requests");
    for (const card of Array.from(box.children)) {
      if (!state.requests.has(card.dataset.request)) card.remove();
    }
    const drawn = new Set(Array.from(box.children, (card) => card.dataset.request));
    for (const request of state.requests.values()) {
      if (drawn.has(request.id)) continue;
      if (request.kind === "interaction") { box.append(formCard(request)); continue; }
      if (request.kind !== "approval") continue;
      const show = request.show;
      const message = el("input", { type: "text", class: "deny-message", placeholder: "message (optional)" });
      const approve = el("button", { type: "button", class: "approve", text: "Approve" });
      const deny = el("button", { type: "button", class: "deny secondary", text: "Deny" });
      const card = el("div", { class: "request", "data-request": request.id },
        el("h3", { text: `${show.identity} asks for approval` }),
        show.reason ? el("div", { class: "reason", text: show.reason }) : null,
        el("div", { class: "label", text: "intended effects" }), effectsNode(show.effects),
        el("details", {}, el("summary", { text: "arguments" }), el("pre", { text: JSON.stringify(show.arguments, null, 2) })),
        el("div", { class: "row" }, approve, deny, message));
      const send = async (approved) => {
        approve.disabled = deny.disabled = true;
        try {
          await api("POST", `/api/requests/${request.id}`, { approved, message: message.value || null });
          state.requests.delete(request.id);
          drawRequests();
        } catch (error) { banner(`${error.code}: ${error.message}`, "error"); approve.disabled = deny.disabled = false; }
      };
      approve.addEventListener("click", () => send(true));
      deny.addEventListener("click", () => send(false));
      box.append(card);
    }
  }

  // A tool's question (ask_user): its form, answered or cancelled by id; invalid values are
  // refused by the server and the request stays pending.
  function formCard(request) {
    const show = request.show;
    const card = el("div", { class: "request form-request", "data-request": request.id },
      el("h3", { text: `${show.identity} asks you` }));
    const answer = async ({ action, values }) => {
      try {
        if (action === "cancel") await api("POST", `/api/requests/${request.id}/cancel`);
        else await api("POST", `/api/requests/${request.id}`, { values });
        state.requests.delete(request.id);
        drawRequests();
      } catch (error) { banner(`${error.code}: ${error.message}`, "error"); }
    };
    card.append(render(show.document, answer));
    return card;
  }

  // --- panels -----------------------------------------------------------------------------

  function showPanel(update) {
    const name = `${update.identity}:${update.panel}`;
    const declaration = update.declaration || {};
    const old = state.panels.get(name);
    if (old && old.revision !== null && update.revision !== null && old.revision > update.revision) return;
    if (old && old.node) old.node.remove();
    if (update.op === "close" || update.document === null) { state.panels.delete(name); return; }
    const node = el("section", { class: "panel", "data-panel": name },
      el("h3", { text: declaration.title || update.panel }), render(update.document));
    const actions = declaration.actions || [];
    if (actions.length) {
      const row = el("div", { class: "row actions" });
      for (const action of actions) {
        const button = el("button", { type: "button", class: "secondary", "data-action": action.id, text: action.title || action.id });
        button.addEventListener("click", () => runAction(name, action.id));
        row.append(button);
      }
      node.append(row);
    }
    const placement = declaration.placement || "sidebar";
    if (placement === "chat") $("log").append(node); else $("panels").append(node);
    state.panels.set(name, { revision: update.revision, node });
  }

  async function runAction(panel, action) {
    try {
      const result = await api("POST",
        `/api/sessions/${state.session}/panels/${encodeURIComponent(panel)}/actions/${encodeURIComponent(action)}`);
      if (result.kind === "prompt" && result.prompt) $("prompt").value = result.prompt;
    } catch (error) { banner(`${error.code}: ${error.message}`, "error"); }
  }

  // --- sending ----------------------------------------------------------------------------

  async function send() {
    const prompt = $("prompt").value;
    if (!prompt.trim()) return;
    try {
      if (state.session) {
        await api("POST", `/api/sessions/${state.session}/turns`, { prompt });
      } else {
        const { session_id } = await api("POST", "/api/sessions", { prompt });
        await openSession(session_id);
      }
      $("prompt").value = "";
    } catch (error) {
      const why = error.code === "session_locked"
        ? "this session is open in another front end: it can be watched here, not written to" : error.message;
      banner(`${error.code}: ${why}`, "error");
    }
  }

  // --- preferences ------------------------------------------------------------------------

  function applyPrefs(prefs) {
    document.documentElement.dataset.theme = prefs.theme;
    document.documentElement.dataset.panels = prefs.panels;
    $("pref-theme").value = prefs.theme;
    $("pref-panels").value = prefs.panels;
  }

  async function savePref(key, value) {
    try { applyPrefs(await api("PUT", "/api/preferences", { [key]: value })); } catch (error) { report(error); }
  }

  // --- wiring -----------------------------------------------------------------------------

  $("send").addEventListener("click", send);
  $("prompt").addEventListener("keydown", (e) => { if (e.key === "Enter" && e.ctrlKey) send(); });
  $("cancel").addEventListener("click", () =>
    api("POST", `/api/sessions/${state.session}/cancel`).catch(report));
  $("older").addEventListener("click", () => showOlder().catch(report));
  $("new-session").addEventListener("click", () => {
    if (state.source) state.source.close();
    Object.assign(state, { session: null, running: false, requests: new Map() });
    $("log").replaceChildren(); $("panels").replaceChildren(); $("requests").replaceChildren();
    history.replaceState(null, "", "/");
    status(); $("prompt").focus();
  });
  $("pref-theme").addEventListener("change", (e) => savePref("theme", e.target.value));
  $("pref-panels").addEventListener("change", (e) => savePref("panels", e.target.value));

  window.addEventListener("pagehide", () => { state.leaving = true; });
  api("GET", "/api/preferences").then(applyPrefs, report);
  const wanted = location.hash.slice(1);
  if (wanted) openSession(wanted).catch(report);
  else loadSessions().catch(report);
  document.body.dataset.ready = "true";
})();
