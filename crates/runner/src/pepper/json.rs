//! Pepper vars as JSON: the messages of `pexe2wasm run --messages json` (one JSON value
//! per line of standard input and output) and the non-string messages of the default line
//! mode.
//!
//! # Encoding
//!
//! | var                         | JSON                                                  |
//! |-----------------------------|-------------------------------------------------------|
//! | undefined                   | `{"$undefined":true}`                                 |
//! | null                        | `null`                                                |
//! | bool                        | `true`, `false`                                       |
//! | int32                       | an integer: `42`                                      |
//! | double (finite)             | a number as serde_json writes an `f64`: `1.5`, `2.0`, `-0.0`, `1e+300` |
//! | double NaN, ±infinity       | `{"$double":"NaN"}`, `{"$double":"Infinity"}`, `{"$double":"-Infinity"}` |
//! | string                      | a string                                              |
//! | array                       | an array                                              |
//! | dictionary                  | an object, keys escaped (below), in sorted key order  |
//! | array buffer                | `{"$arraybuffer":"<base64>"}`: standard alphabet, with padding |
//! | resource                    | `{"$resource":N}` (the `PP_Resource`); output only    |
//! | object                      | `{"$object":N}` (the var id); output only             |
//!
//! **Tags and escaping.** An object whose only key starts with `$` is a *tag*. A dictionary
//! key that starts with `$` is written with one more `$` in front (`$x` as `$$x`, `$` as
//! `$$`) and read back without it, so no dictionary looks like a tag. On input:
//!
//! - an object with exactly one key `$undefined` (value `true`), `$double` (value `"NaN"`,
//!   `"Infinity"` or `"-Infinity"`) or `$arraybuffer` (a base64 string as above, canonical
//!   padding, at most [`MAX_ARRAY_BUFFER_LENGTH`] bytes decoded) is that var;
//! - `$resource` and `$object` are refused: a module never receives a resource or an
//!   object from the page;
//! - an object whose only key starts with a single `$` and is none of those is an error
//!   naming the key; in an object of several keys, every key starting with `$` must be an
//!   escape (`$$...`), or it is an error naming the key;
//! - every other object is a dictionary.
//!
//! **Numbers** are read the way Chrome converted a JavaScript number: a value that is an
//! integer and fits in an `i32` is an int32 (`1`, `1.0`, `-5e0`, `-2147483648`), anything
//! else a double (`1.5`, `2147483648`, `1e300`, and `-0` / `-0.0`, which are not int32s
//! for V8 either). On output an int32 prints as an integer and a double as serde_json
//! prints an `f64` (`2.0` for two). So a round trip keeps every value but not always the
//! type: a double with an integral value that fits in an `i32` comes back as an int32,
//! exactly as it would through JavaScript. Numbers too large for an `f64` (`1e400`) are
//! rejected by the JSON parser.
//!
//! **Limits.** A var graph with a cycle (an array that holds itself, directly or not) is
//! refused, as Chrome refused to send one; a var reachable twice without a cycle is written
//! twice. Nesting is limited to [`MAX_DEPTH`] (127) levels of JSON arrays and objects, tag
//! objects included (`[[1]]` is 2 levels, `[{"$undefined":true}]` too), both ways; this is
//! the deepest serde_json's parser accepts by default (its recursion limit of 128), so
//! every line [`to_line`] writes, [`parse_line`] reads back, and a deeper line fails in the
//! parser with a syntax error. One encoding writes at most [`MAX_VALUES`] (2^20) vars (shared
//! vars counted each time they are written), so that a small graph of shared arrays cannot
//! expand into an enormous message. Arrays read are limited to [`MAX_ARRAY_LENGTH`]
//! elements.
//!
//! **Errors** ([`JsonError`]) say what is wrong and where: a syntax error carries
//! serde_json's column, a bad key or tag is named. Decoding creates nothing on error.
//!
//! **Line mode.** [`to_text_line`] writes a string var as its text, unless the text
//! contains `\n` or `\r`, in which case it is written as JSON like every other var, so that
//! one message is always one line. Text and JSON are not told apart in this mode: a string
//! var holding `null` and the null var both print `null`.
//!
//! An array buffer is encoded from the store's bytes: a host that maps buffers into module
//! memory copies them back first.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::var::{PpVar, VarStore, MAX_ARRAY_BUFFER_LENGTH, MAX_ARRAY_LENGTH};

/// The deepest nesting of JSON arrays and objects, both ways (see the module
/// documentation).
pub const MAX_DEPTH: usize = 127;

/// The most vars one encoding writes (see the module documentation).
pub const MAX_VALUES: usize = 1 << 20;

const TAG_UNDEFINED: &str = "$undefined";
const TAG_DOUBLE: &str = "$double";
const TAG_ARRAY_BUFFER: &str = "$arraybuffer";
const TAG_RESOURCE: &str = "$resource";
const TAG_OBJECT: &str = "$object";

/// Why a var could not be encoded or decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JsonError {
    /// The line is not JSON (this includes serde_json's nesting limit).
    #[error("invalid JSON at column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        /// serde_json's description (without the position).
        message: String,
    },
    /// A reference-counted var to encode is not live in the store (released too often,
    /// or never created).
    #[error("var {0:?} is not live (released too often, never created, or of another type)")]
    DeadVar(PpVar),
    /// The var graph holds a cycle through this container.
    #[error("cannot encode a var that contains itself: {0:?} is reached again inside itself")]
    Cycle(PpVar),
    /// Nesting deeper than [`MAX_DEPTH`].
    #[error("nested deeper than {MAX_DEPTH} levels of arrays and objects")]
    TooDeep,
    /// More than [`MAX_VALUES`] vars to write.
    #[error("more than {MAX_VALUES} values to write (shared vars count each time)")]
    TooManyValues,
    /// An array longer than [`MAX_ARRAY_LENGTH`].
    #[error("an array of {0} elements is longer than {MAX_ARRAY_LENGTH}")]
    ArrayTooLong(usize),
    /// A one-key object whose key starts with `$` and is no known tag.
    #[error("unknown tag {0:?}: a dictionary key starting with `$` is written with another `$` in front (`$$`)")]
    UnknownTag(String),
    /// A key starting with a single `$` in an object of several keys.
    #[error("key {0:?} in an object of several keys: a dictionary key starting with `$` is written with another `$` in front (`$$`), and a tag is an object's only key")]
    UnescapedKey(String),
    /// `$resource` or `$object` on input.
    #[error("tag {0:?} is refused: a module never receives a resource or an object from the page")]
    RefusedTag(String),
    /// A known tag with a value it does not take.
    #[error("bad value for tag {tag:?}: {reason}")]
    BadTagValue { tag: String, reason: String },
    /// A number that is no `f64`.
    #[error("number {0} is out of range")]
    NumberOutOfRange(String),
    /// The store could not create a var (its ids are exhausted).
    #[error("the var store cannot create more vars")]
    StoreFull,
}

/// The JSON for `var` (see the module documentation).
pub fn var_to_json(store: &VarStore, var: PpVar) -> Result<Value, JsonError> {
    Encoder {
        store,
        path: Vec::new(),
        count: 0,
    }
    .encode(var, 0)
}

/// `var` as one line of JSON, without a newline.
pub fn to_line(store: &VarStore, var: PpVar) -> Result<String, JsonError> {
    // The compact form escapes control characters in strings, so it has no line break.
    Ok(var_to_json(store, var)?.to_string())
}

/// `var` as one line of the default line mode: a string var's text when it holds no `\n`
/// or `\r`, anything else as [`to_line`].
pub fn to_text_line(store: &VarStore, var: PpVar) -> Result<String, JsonError> {
    match store.string(var) {
        Some(s) if !s.contains(['\n', '\r']) => Ok(s.to_owned()),
        _ => to_line(store, var),
    }
}

/// The var `json` describes (see the module documentation), created in `store`; the caller
/// owns its one reference. On error nothing created stays in the store.
pub fn var_from_json(store: &mut VarStore, json: &Value) -> Result<PpVar, JsonError> {
    decode(store, json, 0)
}

/// The var one line of JSON describes, as [`var_from_json`]. A syntax error carries
/// serde_json's line and column (1-based column; an empty line is an error at column 0).
pub fn parse_line(store: &mut VarStore, line: &str) -> Result<PpVar, JsonError> {
    let json: Value = serde_json::from_str(line).map_err(|e| {
        // serde_json's text ends with the position, which the error carries apart.
        let mut message = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        if message.ends_with(&suffix) {
            message.truncate(message.len() - suffix.len());
        }
        JsonError::Syntax {
            line: e.line(),
            column: e.column(),
            message,
        }
    })?;
    var_from_json(store, &json)
}

struct Encoder<'a> {
    store: &'a VarStore,
    /// The containers being written, outermost first.
    path: Vec<PpVar>,
    count: usize,
}

impl Encoder<'_> {
    /// `var`'s JSON, `depth` levels of arrays and objects inside the outermost value.
    fn encode(&mut self, var: PpVar, depth: usize) -> Result<Value, JsonError> {
        self.count += 1;
        if self.count > MAX_VALUES {
            return Err(JsonError::TooManyValues);
        }
        // Every container and tag opens one level.
        let opens_level = !matches!(
            var,
            PpVar::Null | PpVar::Bool(_) | PpVar::Int32(_) | PpVar::String(_)
        ) && !matches!(var, PpVar::Double(d) if d.is_finite());
        if opens_level && depth >= MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        let store = self.store;
        Ok(match var {
            PpVar::Undefined => tag(TAG_UNDEFINED, Value::Bool(true)),
            PpVar::Null => Value::Null,
            PpVar::Bool(b) => Value::Bool(b),
            PpVar::Int32(i) => Value::from(i),
            PpVar::Double(d) => match Number::from_f64(d) {
                Some(n) => Value::Number(n),
                None => tag(TAG_DOUBLE, Value::from(non_finite_name(d))),
            },
            PpVar::String(_) => {
                Value::String(store.string(var).ok_or(JsonError::DeadVar(var))?.to_owned())
            }
            PpVar::Array(_) => {
                let elements = store.array_elements(var).ok_or(JsonError::DeadVar(var))?;
                self.enter(var)?;
                let mut out = Vec::with_capacity(elements.len().min(MAX_VALUES));
                for &element in elements {
                    out.push(self.encode(element, depth + 1)?);
                }
                self.path.pop();
                Value::Array(out)
            }
            PpVar::Dictionary(_) => {
                let entries = store.dict_entries(var).ok_or(JsonError::DeadVar(var))?;
                self.enter(var)?;
                let mut out = Map::new();
                for (key, &value) in entries {
                    let key = if key.starts_with('$') {
                        format!("${key}")
                    } else {
                        key.clone()
                    };
                    out.insert(key, self.encode(value, depth + 1)?);
                }
                self.path.pop();
                Value::Object(out)
            }
            PpVar::ArrayBuffer(_) => {
                let bytes = store
                    .array_buffer_bytes(var)
                    .ok_or(JsonError::DeadVar(var))?;
                tag(TAG_ARRAY_BUFFER, Value::String(BASE64.encode(bytes)))
            }
            PpVar::Resource(r) => tag(TAG_RESOURCE, Value::from(r)),
            PpVar::Object(id) => tag(TAG_OBJECT, Value::from(id.0)),
        })
    }

    /// Pushes `container` on the path, refusing it if it is already there.
    fn enter(&mut self, container: PpVar) -> Result<(), JsonError> {
        if self.path.contains(&container) {
            return Err(JsonError::Cycle(container));
        }
        self.path.push(container);
        Ok(())
    }
}

fn tag(name: &str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(name.to_owned(), value);
    Value::Object(map)
}

fn non_finite_name(d: f64) -> &'static str {
    if d.is_nan() {
        "NaN"
    } else if d > 0.0 {
        "Infinity"
    } else {
        "-Infinity"
    }
}

/// A JavaScript number as Chrome made it a var: int32 when it is an integer that fits,
/// `-0` excluded; double otherwise.
fn number_var(d: f64) -> PpVar {
    let fits = d.fract() == 0.0 && d >= f64::from(i32::MIN) && d <= f64::from(i32::MAX);
    if fits && !(d == 0.0 && d.is_sign_negative()) {
        PpVar::Int32(d as i32)
    } else {
        PpVar::Double(d)
    }
}

/// A var created in `store`, failing with [`JsonError::StoreFull`] when it refused.
fn created(var: PpVar) -> Result<PpVar, JsonError> {
    if var == PpVar::Null {
        Err(JsonError::StoreFull)
    } else {
        Ok(var)
    }
}

fn decode(store: &mut VarStore, json: &Value, depth: usize) -> Result<PpVar, JsonError> {
    match json {
        Value::Null => Ok(PpVar::Null),
        Value::Bool(b) => Ok(PpVar::Bool(*b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                return Ok(i32::try_from(i).map_or(PpVar::Double(i as f64), PpVar::Int32));
            }
            match n.as_f64() {
                Some(d) if d.is_finite() => Ok(number_var(d)),
                _ => Err(JsonError::NumberOutOfRange(n.to_string())),
            }
        }
        Value::String(s) => created(store.string_from_str(s)),
        Value::Array(elements) => {
            if depth >= MAX_DEPTH {
                return Err(JsonError::TooDeep);
            }
            if elements.len() > MAX_ARRAY_LENGTH as usize {
                return Err(JsonError::ArrayTooLong(elements.len()));
            }
            let array = created(store.array_create())?;
            for element in elements {
                match decode(store, element, depth + 1) {
                    // The length was checked, so the push succeeds.
                    Ok(v) => {
                        store.array_push_owned(array, v);
                    }
                    Err(e) => {
                        store.release(array);
                        return Err(e);
                    }
                }
            }
            Ok(array)
        }
        Value::Object(map) => {
            if depth >= MAX_DEPTH {
                return Err(JsonError::TooDeep);
            }
            if map.len() == 1 {
                if let Some((key, value)) = map.iter().next() {
                    if key.starts_with('$') && !key.starts_with("$$") {
                        return decode_tag(store, key, value);
                    }
                }
            }
            let dict = created(store.dict_create())?;
            if let Err(e) = decode_entries(store, dict, map, depth) {
                store.release(dict);
                return Err(e);
            }
            Ok(dict)
        }
    }
}

fn decode_entries(
    store: &mut VarStore,
    dict: PpVar,
    map: &Map<String, Value>,
    depth: usize,
) -> Result<(), JsonError> {
    // Unescape every key before creating anything, in key order.
    let mut entries = BTreeMap::new();
    for (key, value) in map {
        let key = match key.strip_prefix('$') {
            Some(rest) if rest.starts_with('$') => rest,
            Some(_) => return Err(JsonError::UnescapedKey(key.clone())),
            None => key.as_str(),
        };
        entries.insert(key, value);
    }
    for (key, value) in entries {
        let value = decode(store, value, depth + 1)?;
        store.dict_insert_owned(dict, key.to_owned(), value);
    }
    Ok(())
}

fn decode_tag(store: &mut VarStore, key: &str, value: &Value) -> Result<PpVar, JsonError> {
    let bad = |reason: &str| JsonError::BadTagValue {
        tag: key.to_owned(),
        reason: reason.to_owned(),
    };
    match key {
        TAG_UNDEFINED => match value {
            Value::Bool(true) => Ok(PpVar::Undefined),
            _ => Err(bad("expected true")),
        },
        TAG_DOUBLE => match value.as_str() {
            Some("NaN") => Ok(PpVar::Double(f64::NAN)),
            Some("Infinity") => Ok(PpVar::Double(f64::INFINITY)),
            Some("-Infinity") => Ok(PpVar::Double(f64::NEG_INFINITY)),
            _ => Err(bad(r#"expected "NaN", "Infinity" or "-Infinity""#)),
        },
        TAG_ARRAY_BUFFER => {
            let text = value
                .as_str()
                .ok_or_else(|| bad("expected a base64 string"))?;
            let bytes = BASE64
                .decode(text)
                .map_err(|e| bad(&format!("invalid base64: {e}")))?;
            if bytes.len() > MAX_ARRAY_BUFFER_LENGTH as usize {
                return Err(bad(&format!(
                    "{} bytes is more than the {MAX_ARRAY_BUFFER_LENGTH} an array buffer may hold",
                    bytes.len()
                )));
            }
            created(store.array_buffer_from(bytes))
        }
        TAG_RESOURCE | TAG_OBJECT => Err(JsonError::RefusedTag(key.to_owned())),
        _ => Err(JsonError::UnknownTag(key.to_owned())),
    }
}
