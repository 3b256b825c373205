// PPB_TextInputController;1.0: what the app tells the browser about its text input. Only
// the page can act on it (its editable element, embed.js, takes the compositions of the
// user's IME), so each call is a message to the page on this worker's port: from the main
// thread or any other, as Chrome took these calls from any thread.
//
// Bad input never throws out of the host: an unknown type, a rect or var the module's
// memory does not hold, or a var that is not a string is refused with a console warning
// (the functions return nothing, so there is no PP_ERROR to give).

import { T } from "../vars.js";
import { TO_PAGE } from "../protocol.js";

export const TEXT_INPUT = { NONE: 0, TEXT: 1, PASSWORD: 2, SEARCH: 3, EMAIL: 4, NUMBER: 5, TELEPHONE: 6, URL: 7 };
const LAST = TEXT_INPUT.URL;
/** The longest surrounding text passed on (Chrome's IMEs took a few hundred characters). */
export const MAX_SURROUNDING = 64 * 1024;

const I = "PPB_TextInputController;1.0";

export function register(reg, cx) {
  const warn = (what) => cx.console(2, `${I} ${what}`);

  reg.def(I, "SetTextInputType", (instance, type) => {
    if (instance !== cx.instance) return;
    if (type < 0 || type > LAST) return warn(`SetTextInputType: ${type} is not a PP_TextInput_Type; ignored`);
    cx.toPage({ t: TO_PAGE.TEXT_INPUT, type });
  });

  reg.def(I, "UpdateCaretPosition", (instance, caret) => {
    if (instance !== cx.instance) return;
    if (caret === 0) return warn("UpdateCaretPosition: NULL caret; ignored");
    let rect;
    try {
      rect = [0, 4, 8, 12].map((o) => cx.mem.i32(caret + o));
    } catch (e) {
      return warn(`UpdateCaretPosition: ${e.message}; ignored`);
    }
    cx.toPage({ t: TO_PAGE.TEXT_CARET, rect });
  });

  reg.def(I, "CancelCompositionText", (instance) => {
    if (instance === cx.instance) cx.toPage({ t: TO_PAGE.TEXT_CANCEL });
  });

  reg.def(I, "UpdateSurroundingText", (instance, text, caret, anchor) => {
    if (instance !== cx.instance) return;
    let s;
    try {
      const v = cx.vars.read(text);
      s = v.t === T.STRING ? cx.vars.toJS(v) : undefined;
    } catch (e) {
      return warn(`UpdateSurroundingText: ${e.message}; ignored`);
    }
    if (typeof s !== "string") return warn("UpdateSurroundingText: the text is not a live string var; ignored");
    const bytes = new TextEncoder().encode(s);
    if (bytes.length > MAX_SURROUNDING) {
      return warn(`UpdateSurroundingText: ${bytes.length} bytes of text, more than ${MAX_SURROUNDING}; ignored`);
    }
    cx.toPage({ t: TO_PAGE.TEXT_SURROUNDING, text: s, caret: utf16Offset(bytes, caret >>> 0), anchor: utf16Offset(bytes, anchor >>> 0) });
  });
}

/**
 * The UTF-16 offset of byte offset `b` into UTF-8 `bytes`; the text's end for an offset
 * past it or inside a character, as Chrome's GetSurroundingText gave for an offset it
 * could not convert.
 */
export function utf16Offset(bytes, b) {
  let u = 0;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: no character starts here
    if (i === b) return u;
    u += c >= 0xf0 ? 2 : 1;
  }
  return u; // at or past the end, or inside a character
}
