// Text input for one instance (embed.js): the IME's compositions and committed text, and
// what the app says through PPB_TextInputController (host/ppb/text_input.js).
//
// A browser gives compositions only to an editable element, and the canvas is not one. So
// while the app's text input type is not NONE (Chrome's default for every plugin was TEXT:
// kPluginDefaultTextInputType, "so that IME-unaware plugins still get input methods") and
// the app asked for keyboard or IME events, an invisible <input> at the app's caret takes
// the focus in the canvas's place: the IME's candidate window opens at the caret, and its
// composition events become the events Chrome's renderer made of the browser's
// composition (RenderFrameImpl::OnImeSetComposition, HandlePepperImeCommit;
// PepperPluginInstanceImpl::HandleComposition*). The canvas's key listeners listen on it too.

const CLASS = { KEYBOARD: 2, IME: 16 };
const TYPE = { CHAR: 9, START: 11, UPDATE: 12, END: 13, TEXT: 14 };
export const TEXT_INPUT_NONE = 0;
export const TEXT_INPUT_PASSWORD = 2;
/** The <input>'s inputmode for each PP_TextInput_Type (a virtual keyboard's layout). */
const INPUTMODE = ["none", "text", "text", "search", "email", "decimal", "tel", "url"];

/**
 * The PPAPI events of a composition, as Chrome made them. `send(event)` gives an event to
 * the module; `wants(cls)` says whether the module asked for an input event class. An app
 * that asked for IME events gets COMPOSITION_START (empty text) when a composition gets
 * text, an UPDATE per change, COMPOSITION_END (empty) when it is emptied or cancelled, and
 * COMPOSITION_END then IME_TEXT with committed text; one that did not gets committed text
 * as keyboard CHAR events, one per character (key code: its first UTF-16 unit), if it asked
 * for keyboard events.
 */
export class Composer {
  constructor(send, wants) {
    this.send = send;
    this.wants = wants;
    this.text = ""; // the composition so far (Chrome's pepper_composition_text_)
    this.cancelled = false; // cancelled by the app: the browser's end of it is dropped
    this.typed = false; // a key press typed a character: its text insertion is not a commit
  }

  get ime() {
    return (this.wants(CLASS.IME) & CLASS.IME) !== 0;
  }

  /** A composition starts (compositionstart). */
  start() {
    this.cancelled = false;
  }

  /** The composition is now `text`, with the selection [start, end] in it (UTF-16). */
  update(text, start, end, time) {
    if (this.cancelled) return;
    if (!this.ime) {
      this.text = text;
      return;
    }
    if (this.text === "" && text !== "") this.send({ type: TYPE.START, time, text: "" });
    if (this.text !== "" && text === "") this.send({ type: TYPE.END, time, text: "" });
    this.text = text;
    if (text === "") return;
    // The DOM does not tell an IME's clauses; a range it selects in the composition (macOS
    // IMEs select the clause being converted) is taken for the target clause.
    const s = Math.max(0, Math.min(start, end, text.length));
    const e = Math.min(Math.max(start, end), text.length);
    const spans = s < e ? [{ start: s, end: e, thick: true }] : [];
    this.send({ type: TYPE.UPDATE, time, text, selection: [start, end], spans });
  }

  /** The composition ended (compositionend) with `data` committed ("": none). */
  end(data, time) {
    const was = this.text;
    this.text = "";
    if (this.cancelled) {
      this.cancelled = false;
      return;
    }
    if (data !== "") this.commit(data, time);
    else if (was !== "" && this.ime) this.send({ type: TYPE.END, time, text: "" });
  }

  /** Text committed without a key press typing it (an IME's commit, a virtual keyboard). */
  commit(text, time) {
    this.text = "";
    if (text === "") return;
    if (this.ime) {
      this.send({ type: TYPE.END, time, text });
      this.send({ type: TYPE.TEXT, time, text });
    } else if (this.wants(CLASS.KEYBOARD) & CLASS.KEYBOARD) {
      for (const ch of text) this.send({ type: TYPE.CHAR, time, modifiers: 0, key: ch.charCodeAt(0), text: ch });
    }
  }

  /** A key press that types (its keydown, which sent its own CHAR event if asked for). */
  keyTyped() {
    this.typed = true;
  }
  keyReleased() {
    this.typed = false;
  }

  /** Text inserted outside a composition: a key press's own, or a commit. */
  inserted(text, time) {
    if (this.typed) {
      this.typed = false;
      return;
    }
    this.commit(text, time);
  }

  /** The app cancels the composition: it ends with nothing. True if there was one. */
  cancel(time) {
    const had = this.text !== "";
    if (had && this.ime) this.send({ type: TYPE.END, time, text: "" });
    this.text = "";
    this.cancelled = true;
    return had;
  }
}

/** PPAPI's TimeTicks (seconds) of a DOM event, or of now. */
function ticks(e) {
  return (performance.timeOrigin + (e?.timeStamp ?? performance.now())) / 1000;
}

const HIDDEN =
  "position:fixed;margin:0;padding:0;border:0;outline:none;opacity:0;pointer-events:none;" +
  "background:transparent;color:transparent;caret-color:transparent;overflow:hidden;white-space:pre;" +
  "box-sizing:border-box;z-index:2147483647;";
// While an IME-unaware app's composition goes on, it is shown at the caret, as the IME's
// own window showed it in Chrome (the app cannot draw it).
const SHOWN =
  "position:fixed;margin:0;padding:0 2px;border:1px solid;outline:none;opacity:1;pointer-events:none;" +
  "background:Canvas;color:CanvasText;caret-color:auto;overflow:hidden;white-space:pre;" +
  "box-sizing:content-box;z-index:2147483647;";

/**
 * The editable element of an instance and its state. `send(event)` and `wants(cls)` as
 * for Composer; `onFocus(has)` when the instance gains or loses the focus (the canvas or
 * the element).
 */
export class TextInput {
  constructor(canvas, { send, wants, onFocus }) {
    this.canvas = canvas;
    this.wants = wants;
    this.onFocus = onFocus;
    this.composer = new Composer(send, wants);
    this.type = 1; // PP_TEXTINPUT_TYPE_TEXT, Chrome's default for a plugin
    this.caret = null; // [x, y, w, h] in the plugin; null: its bottom-left corner, as Chrome
    this.surrounding = { text: "", caret: 0, anchor: 0 };
    this.composing = false;
    this.focused = false;
    const el = document.createElement("input");
    el.type = "text";
    el.className = "pexe2wasm-text-input";
    el.tabIndex = -1; // Tab reaches the canvas, which hands the focus on
    el.autocomplete = "off";
    el.spellcheck = false;
    el.setAttribute("autocapitalize", "off");
    el.setAttribute("autocorrect", "off");
    el.setAttribute("aria-label", canvas.getAttribute("aria-label") ?? "text input of the plugin");
    el.style.cssText = HIDDEN;
    canvas.after(el);
    this.el = el;
    this.applyType();
    this.listen();
    this.sync();
  }

  /** Whether the element takes the canvas's focus now. */
  active() {
    return this.type !== TEXT_INPUT_NONE && (this.wants(CLASS.KEYBOARD | CLASS.IME) & (CLASS.KEYBOARD | CLASS.IME)) !== 0;
  }

  /** What can take the focus for the instance now. */
  focusTarget() {
    return this.active() ? this.el : this.canvas;
  }

  /** Moves the focus where it belongs after a change of type or classes. */
  sync() {
    const had = document.activeElement === this.el || document.activeElement === this.canvas;
    const active = this.active();
    if (!active && this.composing) this.cancelComposition();
    // Disabled, so that a composition cannot reach it through the page's selection, which
    // stays in it after the focus left (Chromium then focused it again).
    this.el.disabled = !active;
    if (had && document.activeElement !== this.focusTarget()) this.focusTarget().focus({ preventScroll: true });
  }

  report(has) {
    if (has === this.focused) return;
    this.focused = has;
    this.onFocus(has);
  }

  listen() {
    const { canvas, el, composer } = this;
    canvas.addEventListener("focus", () => {
      this.report(true);
      // Shift+Tab from the element lands on the canvas: it stays there, or the focus
      // could never leave backwards.
      if (this.active() && !this.tabbingBack) el.focus({ preventScroll: true });
      this.tabbingBack = false;
    });
    canvas.addEventListener("blur", (e) => {
      if (e.relatedTarget !== el) this.report(false);
    });
    el.addEventListener("focus", () => {
      this.report(true);
      this.place();
    });
    el.addEventListener("blur", (e) => {
      if (e.relatedTarget !== canvas) this.report(false);
    });
    el.addEventListener("compositionstart", () => {
      this.composing = true;
      this.base = Math.min(el.selectionStart ?? 0, el.selectionEnd ?? 0);
      composer.start();
      this.place();
    });
    // The composition's text and selection as they are once it changed the element.
    el.addEventListener("input", (/** @type {InputEvent} */ e) => {
      // What a browser inserts after a composition ended (Firefox's last input event).
      if (!this.composing) {
        this.restore();
        return;
      }
      if (e.inputType !== "insertCompositionText") return;
      const text = typeof e.data === "string" ? e.data : "";
      const rel = (o) => Math.max(0, Math.min((o ?? 0) - this.base, text.length));
      composer.update(text, rel(el.selectionStart), rel(el.selectionEnd), ticks(e));
      this.show(!composer.ime && !composer.cancelled && text !== "" ? text : null);
    });
    el.addEventListener("compositionend", (e) => {
      this.composing = false;
      composer.end(typeof e.data === "string" ? e.data : "", ticks(e));
      this.show(null);
      // The element keeps the app's surrounding text, not what was typed into it.
      queueMicrotask(() => this.restore());
    });
    el.addEventListener("beforeinput", (e) => {
      if (e.isComposing || e.inputType === "insertCompositionText") return;
      if (e.inputType === "insertText" || e.inputType === "insertReplacementText") {
        composer.inserted(typeof e.data === "string" ? e.data : (e.dataTransfer?.getData("text/plain") ?? ""), ticks(e));
      }
      e.preventDefault();
    });
    el.addEventListener("keydown", (e) => {
      if (e.isComposing || e.keyCode === 229) return;
      if (e.key.length === 1 && !e.ctrlKey && !e.metaKey) composer.keyTyped();
      // Enter in an <input> would submit a form around the plugin; the canvas never did.
      if (e.key === "Enter") e.preventDefault();
      this.tabbingBack = e.key === "Tab" && e.shiftKey;
    });
    el.addEventListener("keyup", () => composer.keyReleased());
    // The caret follows the canvas on the screen.
    const follow = () => {
      if (document.activeElement === el) this.place();
    };
    window.addEventListener("scroll", follow, { passive: true, capture: true });
    window.addEventListener("resize", follow, { passive: true });
  }

  /** Puts the element at the app's caret (its bottom-left corner before the app says). */
  place() {
    const r = this.canvas.getBoundingClientRect();
    const [x, y, w, h] = this.caret ?? [0, Math.round(r.height), 0, 0];
    const s = this.el.style;
    s.left = `${Math.round(r.left + x)}px`;
    s.top = `${Math.round(r.top + y)}px`;
    s.height = `${Math.max(1, h)}px`;
    s.fontSize = `${Math.max(1, h)}px`;
    s.lineHeight = `${Math.max(1, h)}px`;
    if (!this.shown) s.width = `${Math.max(1, w)}px`;
  }

  /** Shows `text` being composed for an IME-unaware app, or hides the element (null). */
  show(text) {
    const was = this.shown;
    this.shown = text !== null;
    if (was !== this.shown) this.el.style.cssText = this.shown ? SHOWN : HIDDEN;
    if (this.shown) {
      this.el.style.width = `${text.length + 1}em`;
      this.el.style.fontSize = "16px";
      this.el.style.height = this.el.style.lineHeight = "20px";
    }
    this.place();
  }

  /** Puts the app's surrounding text and selection back into the element. */
  restore() {
    if (this.composing) return;
    const { text, caret, anchor } = this.surrounding;
    // An <input> drops line breaks: a space keeps every offset.
    const value = text.replace(/[\r\n]/g, " ");
    if (this.el.value !== value) this.el.value = value;
    try {
      this.el.setSelectionRange(Math.min(caret, anchor), Math.max(caret, anchor), anchor <= caret ? "forward" : "backward");
    } catch {
      // an element that has no selection: nothing to put back
    }
  }

  applyType() {
    this.el.type = this.type === TEXT_INPUT_PASSWORD ? "password" : "text";
    this.el.inputMode = INPUTMODE[this.type] ?? "text";
  }

  // --- what the app says (host/ppb/text_input.js) -------------------------------------------

  setType(type) {
    if (type === this.type) return;
    this.type = type;
    this.applyType();
    this.sync();
  }

  setCaret(rect) {
    this.caret = rect.map((v) => v | 0);
    if (document.activeElement === this.el) this.place();
  }

  setSurrounding(text, caret, anchor) {
    this.surrounding = { text, caret, anchor };
    this.restore();
  }

  /** CancelCompositionText: the composition ends with nothing; the element drops it. */
  cancelComposition() {
    if (!this.composing) return;
    this.composer.cancel(ticks());
    this.composing = false;
    this.show(null);
    // Setting the value drops a composition (Chromium ends it without an event; a browser
    // that commits it instead has its compositionend dropped by the composer).
    this.el.value = "";
    this.restore();
  }

  stop() {
    this.el.remove();
  }
}
