// Hermes web UI: the chat page's live part. Everything a model or a tool wrote is put in
// with textContent; the only HTML inserted is the reply the server rendered (escaped
// Markdown). The server's Content-Security-Policy forbids inline scripts and styles.
"use strict";

(function () {
  const log = document.getElementById("log");
  const composer = document.getElementById("composer");
  if (!log || !composer) return;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const input = composer.querySelector("textarea");
  const sendButton = document.getElementById("send");
  const stopButton = document.getElementById("stop");
  const fileInput = document.getElementById("files");
  const chosen = document.getElementById("chosen");
  let source = null;
  let textBlock = null; // where streamed text goes: reset when a tool starts
  let lastEvent = -1;
  let turnEnded = true;
  let thinking = null; // the "Thinking… N s" row while the model works and nothing shows
  const KEPT = "hermes-command-answer";
  let thinkingSince = 0;
  let thinkingTimer = null;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function scroll() {
    window.scrollTo(0, document.body.scrollHeight);
  }

  function files(list) {
    const box = el("div", "files");
    for (const item of list || []) {
      const link = el("a", item.kind === "image" ? "" : "file", item.kind === "image" ? undefined : item.name);
      link.href = item.url;
      if (item.kind === "image") {
        const image = el("img");
        image.src = item.url;
        image.alt = item.name;
        link.appendChild(image);
        link.target = "_blank";
      } else {
        link.download = item.name;
      }
      box.appendChild(link);
    }
    return box;
  }

  async function post(url, body) {
    const form = body instanceof FormData;
    const headers = { "X-CSRF-Token": csrf };
    if (!form) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: headers,
        body: form ? body : JSON.stringify(body),
        credentials: "same-origin",
      });
    } catch (e) {
      return { error: "Hermes cannot be reached (is hermes web still running?)" };
    }
    let data = {};
    try { data = await response.json(); } catch (e) { data = { error: response.statusText }; }
    if (!response.ok && !data.error) data.error = response.statusText;
    return data;
  }

  function notice(text, className) {
    log.appendChild(el("pre", className || "notice", text));
    scroll();
  }

  // A failure as a card in words, not red monospace: what happened, then the message,
  // which ends with the fix (the setting or file to change, or the command to run).
  const PROBLEMS = {
    error: "The turn failed",
    budget: "The turn reached its budget",
    loop: "The turn was stopped: it kept repeating itself",
    busy: "This session is busy",
    send: "The message was not sent",
  };

  function problem(kind, text) {
    const card = el("div", "problem " + kind);
    card.setAttribute("role", "alert");
    const title = Object.hasOwn(PROBLEMS, kind) ? PROBLEMS[kind] : "The turn ended: " + kind;
    card.appendChild(el("p", "title", title));
    if (text) card.appendChild(el("p", "detail", text));
    log.appendChild(card);
    scroll();
  }

  function tickThinking() {
    if (thinking) thinking.textContent = "Thinking… " + Math.floor((Date.now() - thinkingSince) / 1000) + " s";
  }

  // Shown while the model works and nothing else moves: after the message is sent, after
  // each tool ends, after a question is answered; gone as soon as text, a tool or a
  // question arrives, or the turn ends.
  function think(on) {
    if (!on) {
      if (thinking) thinking.remove();
      clearInterval(thinkingTimer);
      thinking = null;
      thinkingTimer = null;
      return;
    }
    if (!thinking) {
      thinking = el("p", "thinking");
      thinking.setAttribute("role", "status");
      thinkingSince = Date.now();
      thinkingTimer = setInterval(tickThinking, 1000);
    }
    tickThinking();
    log.appendChild(thinking);
  }

  function setModel(text) {
    const model = document.querySelector(".chat-head .model");
    if (model && text) model.textContent = text;
  }

  function echo(text) {
    const message = el("div", "msg user command");
    message.appendChild(el("div", "text", text));
    log.appendChild(message);
  }

  function busy(on) {
    sendButton.disabled = on;
    stopButton.hidden = !on;
  }

  function assistantText() {
    if (!textBlock) {
      const message = el("div", "msg assistant live");
      textBlock = el("div", "md streaming");
      message.appendChild(textBlock);
      log.appendChild(message);
    }
    return textBlock;
  }

  function toolBox(event) {
    const box = el("details", "tool running");
    box.id = "tool-" + event.call_id;
    const summary = el("summary");
    summary.appendChild(el("span", "tool-name", event.tool));
    summary.appendChild(document.createTextNode(" "));
    const args = JSON.stringify(event.arguments);
    summary.appendChild(el("code", "args", args.length > 160 ? args.slice(0, 157) + "…" : args));
    summary.appendChild(el("span", "state", "running…"));
    box.appendChild(summary);
    box.appendChild(el("pre", "arguments", JSON.stringify(event.arguments, null, 2)));
    box.appendChild(el("pre", "progress"));
    const parent = event.parent && document.getElementById("tool-" + event.parent);
    (parent || log).appendChild(box);
    textBlock = null;
  }

  function question(event) {
    const card = el("div", "question " + event.kind);
    card.id = "question-" + event.id;
    card.appendChild(el("p", "ask", event.text));
    if (event.command) card.appendChild(el("pre", "command", event.command));
    const buttons = el("div", "choices");
    for (const choice of event.choices) {
      const button = el("button", "choice", choice.label);
      button.type = "button";
      button.dataset.value = choice.value;
      button.addEventListener("click", () => answer(event.id, choice.value, card));
      buttons.appendChild(button);
    }
    card.appendChild(buttons);
    if (event.free_text) {
      const form = el("form", "free");
      const field = el("input");
      field.placeholder = "or answer in your words";
      form.appendChild(field);
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        if (field.value.trim()) answer(event.id, field.value.trim(), card);
      });
      card.appendChild(form);
    }
    log.appendChild(card);
    textBlock = null;
    scroll();
    const first = buttons.querySelector("button");
    if (first) first.focus();
  }

  function closeQuestion(card, text) {
    if (!card || card.classList.contains("closed")) return;
    card.classList.add("closed");
    for (const control of card.querySelectorAll("button, input")) control.disabled = true;
    card.appendChild(el("p", "answered", text));
  }

  async function answer(id, value, card) {
    for (const control of card.querySelectorAll("button, input")) control.disabled = true;
    const result = await post("/api/questions/" + encodeURIComponent(id), { value: value });
    if (result.error) closeQuestion(card, result.error);
  }

  const handlers = {
    user(event) {
      const message = el("div", "msg user");
      message.appendChild(el("div", "text", event.text));
      if (event.attachments && event.attachments.length) message.appendChild(files(event.attachments));
      log.appendChild(message);
      textBlock = null;
    },
    text(event) {
      const block = assistantText();
      if (event.restarted) block.textContent = "";
      block.textContent += event.text;
    },
    notice(event) { notice(event.text); },
    tool_started: toolBox,
    tool_progress(event) {
      const box = document.getElementById("tool-" + event.call_id);
      if (box) box.querySelector(".progress").textContent += event.text + "\n";
    },
    tool_finished(event) {
      const box = document.getElementById("tool-" + event.call_id);
      if (!box) return;
      box.classList.remove("running");
      box.classList.add(event.ok ? "ok" : "failed");
      box.querySelector(".state").textContent = (event.ok ? "ok" : "failed") + " · " + event.duration_s + " s";
      box.appendChild(el("pre", "result", event.content));
    },
    question: question,
    answered(event) {
      closeQuestion(document.getElementById("question-" + event.id), "answered: " + event.value);
    },
    interim(event) {
      // A goal's step, or a reply a late /steer follows: finished, the next one streams after.
      const block = assistantText();
      if (event.html) block.innerHTML = event.html; // rendered and escaped by the server
      block.classList.remove("streaming");
      textBlock = null;
    },
    ended(event) {
      turnEnded = true;
      for (const card of log.querySelectorAll(".question:not(.closed)")) closeQuestion(card, "closed");
      if (event.html) {
        const block = assistantText();
        block.innerHTML = event.html; // rendered and escaped by the server
        block.classList.remove("streaming");
      } else if (textBlock) {
        textBlock.classList.remove("streaming");
      }
      if (event.attachments && event.attachments.length) log.appendChild(files(event.attachments));
      if (event.status === "stopped" || event.status === "interrupted") notice("(" + event.status + ")");
      else if (event.status !== "done") problem(event.status, event.error);
      for (const box of log.querySelectorAll(".tool.running")) box.classList.remove("running");
      textBlock = null;
      busy(false);
      input.focus();
      if (queued.length) send(queued.shift()); // /queue, /goal: sent once the turn is over
    },
  };

  const QUIET = new Set(["text", "interim", "tool_started", "question", "ended", "notice"]); // the wait is over
  // The model is at work again (a notice, a retry say, keeps the row below it).
  const WAITING = new Set(["user", "tool_finished", "answered", "notice"]);

  function follow(sessionId, turn, after) {
    if (source) source.close();
    busy(true);
    lastEvent = after;
    turnEnded = false;
    const url = "/api/sessions/" + encodeURIComponent(sessionId) + "/events?turn=" + turn + "&after=" + after;
    source = new EventSource(url);
    source.onmessage = (message) => {
      const index = Number(message.lastEventId);
      if (index <= lastEvent) return;
      lastEvent = index;
      const event = JSON.parse(message.data);
      if (QUIET.has(event.type)) think(false);
      const handler = handlers[event.type];
      if (handler) handler(event);
      if (WAITING.has(event.type) && !turnEnded && !log.querySelector(".tool.running, .question:not(.closed)")) think(true);
      scroll();
    };
    source.addEventListener("close", () => { source.close(); source = null; think(false); busy(false); });
    source.onerror = () => {
      if (source && source.readyState === EventSource.CLOSED) {
        source = null;
        think(false);
        busy(false);
        if (!turnEnded) notice("the connection to this turn was lost: reload the page to see how it ended", "notice error");
      }
    };
  }

  // What the server takes as a command ("/etc/hosts: what is this?" is a message).
  const COMMAND = /^\/[a-z][\w-]*(\s|$)/;

  const queued = []; // messages a command sends once the running turn is over

  async function send(text) {
    const sessionId = log.dataset.session || null;
    // A command sent while a turn runs (/stop, /usage, /help) leaves the turn's state alone.
    const alongside = source !== null && COMMAND.test(text);
    if (!alongside) busy(true);
    let body = { text: text, session_id: sessionId };
    if (fileInput && fileInput.files.length) {
      body = new FormData();
      body.append("text", text);
      if (sessionId) body.append("session_id", sessionId);
      for (const file of fileInput.files) body.append("files", file, file.name);
      fileInput.value = "";
      chosen.hidden = true;
    }
    const result = await post("/api/turns", body);
    if (result.error) {
      if (text.startsWith("/")) echo(text);
      problem("send", result.error);
      if (!input.value) input.value = text; // nothing typed is lost
      if (!alongside) busy(false);
      return;
    }
    if (result.new || result.reload) {
      // The page is drawn anew (a new chat; the transcript changed): its answer follows.
      sessionStorage.setItem(KEPT, JSON.stringify({ command: text, output: result.output }));
      if (result.new) window.location.assign("/chat");
      else window.location.reload();
      return;
    }
    if (result.model) setModel(result.model);
    for (const line of result.news || []) notice(line); // a background task's outcome
    if (result.switch) {
      // /branch: the chat goes on in the copy, drawn anew with the command's answer.
      sessionStorage.setItem(KEPT, JSON.stringify({ command: text, output: result.output }));
      window.location.assign("/chat/" + encodeURIComponent(result.switch));
      return;
    }
    if (result.output !== undefined) {
      echo(text); // a command's answer follows the command, as in the terminal
      notice(result.output);
      if (!alongside) busy(false);
      if (result.send !== undefined) {
        if (alongside) queued.push(result.send);
        else send(result.send);
      }
      return;
    }
    if (result.session_id && result.session_id !== sessionId) {
      log.dataset.session = result.session_id;
      history.replaceState(null, "", "/chat/" + result.session_id);
      const heading = document.querySelector(".chat-head h1");
      if (heading) heading.textContent = "Session " + result.session_id;
    }
    textBlock = null;
    follow(result.session_id, result.turn, -1);
  }

  composer.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value;
    const withFiles = fileInput && fileInput.files.length > 0;
    if (!text.trim() && !withFiles) return;
    // While a turn runs only a command goes (the runtime says which ones may).
    if (sendButton.disabled && !(source !== null && !withFiles && COMMAND.test(text))) return;
    input.value = "";
    send(text);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      composer.requestSubmit();
    }
  });
  if (fileInput) {
    fileInput.addEventListener("change", () => {
      const names = Array.from(fileInput.files).map((file) => file.name);
      chosen.textContent = names.length ? "attached: " + names.join(", ") : "";
      chosen.hidden = names.length === 0;
    });
  }
  stopButton.addEventListener("click", async () => {
    const sessionId = log.dataset.session;
    if (sessionId) await post("/api/sessions/" + encodeURIComponent(sessionId) + "/stop", {});
  });

  const kept = sessionStorage.getItem(KEPT); // a command whose answer came before a reload
  if (kept) {
    sessionStorage.removeItem(KEPT);
    try {
      const answered = JSON.parse(kept);
      echo(String(answered.command));
      if (answered.output !== undefined) notice(String(answered.output));
    } catch (e) { /* a damaged entry is dropped */ }
  }
  if (log.dataset.session && Number(log.dataset.live) > 0) follow(log.dataset.session, Number(log.dataset.live), -1);
  scroll();
  input.focus();
})();

// The dashboard's pages: a button that asks first, and a live log tail polled every second.
(function () {
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
  const filters = document.querySelector("form[data-tail]");
  const out = document.querySelector("pre.tail");
  if (!filters || !out) return;
  const state = filters.querySelector(".tail-state");
  const KEPT_LINES = 2000;
  let cursor = "";
  let timer = null;
  let asking = 0; // a filter change makes answers to older asks stale

  async function ask() {
    const mine = asking;
    const query = new URLSearchParams(new FormData(filters));
    query.set("cursor", cursor);
    try {
      const response = await fetch(filters.dataset.tail + "?" + query, { credentials: "same-origin" });
      const body = await response.json();
      if (mine !== asking) return;
      if (!response.ok) throw new Error(body.error || response.statusText);
      const stuck = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
      for (const line of body.lines) {
        const row = document.createElement("span");
        row.className = "line " + (line.level || "").toLowerCase();
        row.textContent = line.text + "\n";
        out.appendChild(row);
      }
      while (out.childNodes.length > KEPT_LINES) out.removeChild(out.firstChild);
      cursor = body.cursor;
      state.textContent = "live · " + out.childNodes.length + " lines";
      if (stuck && body.lines.length) window.scrollTo(0, document.body.scrollHeight);
    } catch (error) {
      if (mine === asking) state.textContent = "cannot read: " + error.message + " (retrying)";
    }
    if (mine === asking) timer = setTimeout(ask, 1000);
  }

  filters.addEventListener("change", () => {
    asking += 1;
    clearTimeout(timer);
    cursor = "";
    out.textContent = "";
    ask();
  });
  filters.addEventListener("submit", (event) => event.preventDefault());
  ask();
})();
