// Rendering panel documents: the block catalog (text, checklist, form, mermaid), the same
// in both placements. Everything outside text goes in through textContent; a mermaid
// diagram is drawn by the vendored mermaid (strict security level) or shown as its source.
"use strict";

const Blocks = (() => {
  let diagrams = 0;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  function text(block) {
    return el("div", { class: "block-text", text: block.text });
  }

  function checklist(block) {
    const box = el("div", { class: "block-checklist" });
    if (block.title) box.append(el("h4", { text: block.title }));
    const list = el("ul");
    for (const item of block.items || []) {
      list.append(el("li", { class: "status-" + item.status, "data-status": item.status },
        el("span", { class: "mark", text: { done: "✓", in_progress: "▸", pending: "○" }[item.status] }),
        el("span", { text: item.text })));
    }
    box.append(list);
    return box;
  }

  // A form: its fields; submitting answers the interaction request it belongs to and
  // Cancel cancels it (``answer`` given, called with the action), otherwise it is shown read-only (a panel's copy of it).
  function form(block, answer) {
    const node = el("form", { class: "block-form" });
    if (block.title) node.append(el("h4", { text: block.title }));
    for (const field of block.fields || []) {
      const label = el("label", { text: field.label || field.id });
      let input;
      if (field.type === "text") {
        input = el(field.multiline ? "textarea" : "input", { name: field.id });
        if (field.default) input.value = field.default;
      } else {
        input = el("select", { name: field.id });
        if (field.type === "multi_select") input.multiple = true;
        for (const option of field.options || []) {
          const choice = el("option", { value: option.value, text: option.label || option.value });
          const chosen = Array.isArray(field.default) ? field.default.includes(option.value)
            : field.default === option.value;
          if (chosen) choice.selected = true;
          input.append(choice);
        }
      }
      input.disabled = !answer;
      label.append(input);
      node.append(label);
    }
    const submit = el("button", { type: "submit", text: (block.submit && block.submit.label) || "Submit" });
    submit.disabled = !answer;
    // Cancel ends the interaction request by id (the tool's call ends cancelled).
    const cancel = el("button", { type: "button", class: "cancel-form secondary", text: "Cancel" });
    cancel.disabled = !answer;
    cancel.addEventListener("click", () => answer({ action: "cancel" }));
    node.append(el("div", { class: "row" }, submit, cancel));
    node.addEventListener("submit", (event) => {
      event.preventDefault();
      const values = {};
      for (const field of block.fields || []) {
        const input = node.elements.namedItem(field.id);
        values[field.id] = field.type === "multi_select"
          ? Array.from(input.selectedOptions, (o) => o.value) : input.value;
      }
      answer({ action: "submit", values });
    });
    return node;
  }

  function mermaidBlock(block) {
    const box = el("figure", { class: "block-mermaid" });
    if (block.title) box.append(el("figcaption", { text: block.title }));
    const source = el("pre", { class: "mermaid-source", text: block.source });
    box.append(source);
    if (window.mermaid && window.mermaid.render) {
      diagrams += 1;
      window.mermaid.render("diagram-" + diagrams, block.source).then(({ svg }) => {
        const drawn = el("div", { class: "mermaid-diagram" });
        drawn.innerHTML = svg; // sanitized by mermaid at its strict security level
        source.replaceWith(drawn);
      }, () => { source.classList.add("unrendered"); });
    }
    return box;
  }

  function render(document, answer) {
    const box = el("div", { class: "document" });
    for (const block of (document && document.blocks) || []) {
      if (block.type === "text") box.append(text(block));
      else if (block.type === "checklist") box.append(checklist(block));
      else if (block.type === "form") box.append(form(block, answer));
      else if (block.type === "mermaid") box.append(mermaidBlock(block));
      else box.append(el("pre", { text: JSON.stringify(block, null, 2) }));
    }
    return box;
  }

  if (window.mermaid) {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  }
  return { el, render };
})();
