//! The data model of the Pepper description: types (with ILP32 layouts) and interfaces
//! (with each function's C signature and its PNaCl/wasm signature).

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

/// A WebAssembly value type, as a PNaCl call passes it (PNaCl allows only i32, i64,
/// float and double scalars as call arguments and results; smaller integers are widened
/// to i32).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ValType {
    I32,
    I64,
    F32,
    F64,
}

impl ValType {
    pub fn as_str(self) -> &'static str {
        match self {
            ValType::I32 => "i32",
            ValType::I64 => "i64",
            ValType::F32 => "f32",
            ValType::F64 => "f64",
        }
    }
}

impl fmt::Display for ValType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ValType {
    type Err = SignatureParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "i32" => Ok(ValType::I32),
            "i64" => Ok(ValType::I64),
            "f32" => Ok(ValType::F32),
            "f64" => Ok(ValType::F64),
            other => Err(SignatureParseError(format!(
                "not a wasm value type: {other:?}"
            ))),
        }
    }
}

/// A wasm function type: what a pexe's call of a PPB slot (or the host's call of a PPP
/// slot) looks like after PNaCl's struct-passing rules have been applied.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize)]
pub struct WasmSignature {
    pub params: Vec<ValType>,
    pub results: Vec<ValType>,
}

impl WasmSignature {
    pub fn new(params: &[ValType], results: &[ValType]) -> Self {
        WasmSignature {
            params: params.to_vec(),
            results: results.to_vec(),
        }
    }
}

/// `(i32, i64) -> i32`, `() -> f64`, `(i32) -> ()`.
impl fmt::Display for WasmSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |v: &[ValType]| v.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(", ");
        write!(f, "({}) -> ", list(&self.params))?;
        match self.results.as_slice() {
            [one] => write!(f, "{one}"),
            more => write!(f, "({})", list(more)),
        }
    }
}

/// A signature text that is not of the form `Display` writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad wasm signature: {0}")]
pub struct SignatureParseError(pub String);

/// Reads the form `Display` writes: `(i32, i64) -> i32`, `() -> ()`, `(f64) -> (i32, i32)`.
impl FromStr for WasmSignature {
    type Err = SignatureParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || SignatureParseError(format!("{s:?} is not of the form (i32, ...) -> result"));
        let (params, results) = s.split_once("->").ok_or_else(bad)?;
        let list = |t: &str, need_parens: bool| -> Result<Vec<ValType>, SignatureParseError> {
            let t = t.trim();
            let inner = match t.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
                Some(inner) => inner,
                None if !need_parens => t,
                None => return Err(bad()),
            };
            if inner.trim().is_empty() {
                return Ok(Vec::new());
            }
            inner.split(',').map(str::parse).collect()
        };
        Ok(WasmSignature {
            params: list(params, true)?,
            results: list(results, false)?,
        })
    }
}

/// A C type as written in the description: a base type name (which the description
/// declares), a number of `*`, and the original text (with `const`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CType {
    /// The type as written, normalized: `const char*`, `PP_Var`, `int32_t**`.
    pub text: String,
    /// The named type under the pointers: `char`, `PP_Var`, `int32_t`.
    pub base: String,
    /// How many `*` follow the base type (arrays in parameter lists are pointers).
    pub pointers: u8,
}

impl CType {
    pub fn is_void(&self) -> bool {
        self.base == "void" && self.pointers == 0
    }
}

impl fmt::Display for CType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A field of a struct or union, with its byte offset under ILP32.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Field {
    pub name: String,
    pub ty: CType,
    /// `Some(n)` for an array field `T name[n]`.
    pub count: Option<u32>,
    pub offset: u32,
}

/// What a named type is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TypeKind {
    /// A built-in C scalar (`int32_t`, `double`, `char`, `void`, ...); `wasm` is how it
    /// travels in a call (`None` for `void`).
    Primitive { wasm: Option<ValType> },
    /// Another name for `target`.
    Typedef { target: CType },
    /// A C enum: an i32 in memory and in calls. `values` are its named values as the
    /// header defines them (empty when the description does not list them).
    Enum { values: Vec<EnumValue> },
    /// A struct; passed by value it travels as a pointer to a copy.
    Struct { fields: Vec<Field> },
    /// A union; like a struct in calls.
    Union { fields: Vec<Field> },
    /// A function pointer type (an i32 table index in wasm).
    FuncPtr { params: Vec<Param>, ret: CType },
    /// A struct only ever used through a pointer; its layout is not described.
    Opaque,
}

/// One named value of an enum: `PP_ERROR_FAILED = -2`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnumValue {
    /// The C name: `PP_ERROR_FAILED`.
    pub name: String,
    /// The name without the enum's first matching `strip` prefix (`FAILED`): what the
    /// generated host modules call it.
    pub short: String,
    pub value: i32,
    /// Line in the description text.
    pub line: usize,
}

/// A named type with its ILP32 size and alignment (0 and 1 for `void` and opaque types).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TypeDef {
    pub name: String,
    #[serde(flatten)]
    pub kind: TypeKind,
    pub size: u32,
    pub align: u32,
    /// Line in the description text (0 for built-ins).
    pub line: usize,
}

/// A function or callback parameter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Param {
    pub name: String,
    pub ty: CType,
    /// The wasm type the argument travels as.
    pub wasm: ValType,
    /// True when the C parameter is a struct or union by value, which PNaCl passes as a
    /// pointer to a caller-made copy (so `wasm` is i32).
    pub by_pointer: bool,
}

/// One slot of an interface's function table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: CType,
    /// True when the C result is a struct or union: the caller passes a pointer to the
    /// result as a hidden first argument (`_struct_result`) and the function returns
    /// nothing.
    pub sret: bool,
    /// The signature after PNaCl's rules (hidden result pointer included).
    pub wasm: WasmSignature,
    /// The function's `PP_CompletionCallback` parameter (passed by value), if it has one.
    pub callback: Option<Callback>,
    /// Line in the description text.
    pub line: usize,
}

/// A function's `PP_CompletionCallback` parameter and what the callback is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Callback {
    /// Its index among the C parameters.
    pub param: usize,
    /// Its index among the wasm parameters (one more than `param` after a hidden result
    /// pointer).
    pub wasm_param: usize,
    pub kind: CallbackKind,
}

/// What a function does with its `PP_CompletionCallback`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallbackKind {
    /// It reports the call's completion, with Chrome's rules (pp_completion_callback.h):
    /// a callback whose `func` is NULL blocks the calling thread until the call completes
    /// (refused on the main thread with `PP_ERROR_BLOCKS_MAIN_THREAD`); one with
    /// `PP_COMPLETIONCALLBACK_FLAG_OPTIONAL` lets the call complete at once and return
    /// its result; any other is required: the call returns `PP_OK_COMPLETIONPENDING` and
    /// the callback runs later on the calling thread's message loop.
    Completion,
    /// It is work to run later (`PPB_Core.CallOnMainThread`, `PPB_MessageLoop.PostWork`;
    /// `@schedules` in the description): the call never blocks and ignores the flags.
    Schedules,
}

impl Function {
    /// The function's PNaCl/wasm signature (see the crate docs for the rules).
    pub fn wasm_signature(&self) -> &WasmSignature {
        &self.wasm
    }

    /// Whether a call may block its thread: true for a completion callback (blocking when
    /// the caller passes a callback without `func`, off the main thread).
    pub fn may_block(&self) -> bool {
        matches!(
            self.callback,
            Some(Callback {
                kind: CallbackKind::Completion,
                ..
            })
        )
    }

    /// The C-level signature, e.g. `PP_Var VarFromUtf8(const char* data, uint32_t len)`.
    pub fn c_signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{} {}", p.ty, p.name))
            .collect();
        format!("{} {}({})", self.ret, self.name, params.join(", "))
    }
}

/// Who implements an interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Kind {
    /// `PPB_*`: the browser (host) implements it, the pexe calls it.
    Ppb,
    /// `PPP_*`: the module (pexe) implements it, the host calls it.
    Ppp,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Ppb => "PPB",
            Kind::Ppp => "PPP",
        })
    }
}

/// One version of one interface.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Interface {
    /// The full name string a pexe asks for: `PPB_Var;1.2`, `PPB_OpenGLES2DrawBuffers(Dev);1.0`.
    pub name: String,
    /// The part before `;`: `PPB_Var`.
    pub base: String,
    /// The part after `;`: `1.2`.
    pub version: String,
    pub kind: Kind,
    /// True for `(Dev)` interfaces.
    pub dev: bool,
    /// True when the header marks this version as dev channel only (`/* dev */` or
    /// `[channel=dev]` in the IDL): a stable browser did not offer it.
    pub dev_channel: bool,
    /// The functions in slot order (slot i is at byte offset 4*i of the table).
    pub functions: Vec<Function>,
    /// Line in the description text.
    pub line: usize,
}

impl Interface {
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The slot index of a function.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.functions.iter().position(|f| f.name == name)
    }
}

/// The whole description.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Description {
    /// Every type: the built-in scalars first, then the file's, in file order.
    pub types: Vec<TypeDef>,
    /// Every interface version, in file order.
    pub interfaces: Vec<Interface>,
    #[serde(skip)]
    pub(crate) type_index: HashMap<String, usize>,
    #[serde(skip)]
    pub(crate) interface_index: HashMap<String, usize>,
}

impl Description {
    /// The interface a pexe asks for with `name` (e.g. `PPB_Var;1.2`).
    pub fn interface(&self, name: &str) -> Option<&Interface> {
        self.interface_index.get(name).map(|&i| &self.interfaces[i])
    }

    /// A named type.
    pub fn type_def(&self, name: &str) -> Option<&TypeDef> {
        self.type_index.get(name).map(|&i| &self.types[i])
    }

    /// The named values of an enum (empty when the description lists none), or `None`
    /// when `name` is not an enum.
    pub fn enum_values(&self, name: &str) -> Option<&[EnumValue]> {
        match &self.type_def(name)?.kind {
            TypeKind::Enum { values } => Some(values),
            _ => None,
        }
    }

    /// Every enum that lists its values, in file order: (name, values).
    pub fn enums(&self) -> impl Iterator<Item = (&str, &[EnumValue])> + '_ {
        self.types.iter().filter_map(|t| match &t.kind {
            TypeKind::Enum { values } if !values.is_empty() => Some((t.name.as_str(), &values[..])),
            _ => None,
        })
    }

    /// Every version described for an interface base name, in file order.
    pub fn versions<'a>(&'a self, base: &'a str) -> impl Iterator<Item = &'a Interface> + 'a {
        self.interfaces.iter().filter(move |i| i.base == base)
    }

    /// The description as pretty JSON (for the JavaScript host).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the model always serializes")
    }
}
