//! Pepper vars: the `PP_Var` values a module passes by value, and the store of the
//! reference-counted values behind them.
//!
//! Semantics follow Chrome (`ppapi/c/pp_var.h`, `ppb_var.h`, `ppb_var_array.h`,
//! `ppb_var_dictionary.h`, `ppb_var_array_buffer.h`).
//!
//! # Layout
//!
//! A `PP_Var` in module memory is 16 bytes, little-endian: the type (`i32`), 4 bytes of
//! padding, and an 8-byte value. [`PpVar`] is what those bytes hold;
//! [`PpVar::to_bytes`] / [`PpVar::from_bytes`] convert, and [`PpVar::from_parts`] /
//! [`PpVar::value_bits`] work on (type, 64-bit value) as it crosses the wasm boundary.
//!
//! | type          | code | value                                                  |
//! |---------------|------|--------------------------------------------------------|
//! | undefined     | 0    | 0                                                      |
//! | null          | 1    | 0                                                      |
//! | bool          | 2    | `PP_Bool` (`i32`) in the low half: 1 or 0 (any nonzero reads as true) |
//! | int32         | 3    | `i32` in the low half                                  |
//! | double        | 4    | `f64`                                                  |
//! | string        | 5    | var id (`i64`)                                         |
//! | object        | 6    | var id                                                 |
//! | array         | 7    | var id                                                 |
//! | dictionary    | 8    | var id                                                 |
//! | array buffer  | 9    | var id                                                 |
//! | resource      | 10   | `PP_Resource` (`i32`) in the low half                  |
//!
//! # The store
//!
//! Types 5 to 9 name a value in a [`VarStore`] by a nonzero id. The store hands ids out
//! from a counter starting at 1 and never reuses one, so a stale id can only ever be
//! unknown, never name another value. Each value has a reference count; a new value
//! starts at 1 (owned by whoever asked for it), [`VarStore::add_ref`] and
//! [`VarStore::release`] move it, and the value is freed when it reaches 0. An array
//! element or dictionary value holds one reference on the var it names, so freeing a
//! container releases its contents (with an explicit work list: nesting depth costs no
//! stack). Like in Chrome, a container that (directly or not) holds itself is never freed.
//!
//! A var is *valid* when its type is not reference counted, or when its id names a live
//! value of that same type (an array id passed as a string var is not valid). Every
//! operation answers an invalid var with a neutral result (`false`, `None`, `0`,
//! `PP_VARTYPE_UNDEFINED` or `PP_VARTYPE_NULL`, as documented per function) and never
//! panics. Modules cannot create objects (`PP_VARTYPE_OBJECT`), so the store holds none and
//! an object var is never valid.
//!
//! Where Chrome would allocate without bound from a size the module chooses, the store
//! refuses instead: array buffers above [`MAX_ARRAY_BUFFER_LENGTH`] bytes and arrays above
//! [`MAX_ARRAY_LENGTH`] elements. Reference counts saturate at the store's maximum
//! ([`MAX_REF_COUNT`] unless set lower with [`VarStore::with_max_ref_count`]): a value
//! whose count reached it is pinned, later add-refs and releases leave it alone and it is
//! never freed (a leak, never a free while references remain).
//!
//! The store does no locking of its own; a host shares it behind a `Mutex`.

use std::collections::{BTreeMap, HashMap};

// `PP_VarType`, generated from the interface description.
use pexe2wasm_ppapi::contract::pp_vartype;

/// The largest array buffer the store creates, in bytes (1 GiB).
pub const MAX_ARRAY_BUFFER_LENGTH: u32 = 1 << 30;

/// The most elements an array may have (16 Mi, 256 MiB of elements). Chrome grows an
/// array to any index a module sets; the store refuses past this.
pub const MAX_ARRAY_LENGTH: u32 = 1 << 24;

/// The reference count at which a value is pinned (see the module documentation).
pub const MAX_REF_COUNT: u32 = u32::MAX;

/// The id of a reference-counted var. Ids the store hands out are nonzero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub i64);

/// A `PP_Var` as it travels (by value): what its 16 bytes hold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PpVar {
    Undefined,
    Null,
    Bool(bool),
    Int32(i32),
    Double(f64),
    String(VarId),
    Object(VarId),
    Array(VarId),
    Dictionary(VarId),
    ArrayBuffer(VarId),
    /// A `PP_Resource`.
    Resource(i32),
}

impl PpVar {
    /// The `PP_VarType` number.
    pub fn type_code(self) -> i32 {
        match self {
            PpVar::Undefined => pp_vartype::UNDEFINED,
            PpVar::Null => pp_vartype::NULL,
            PpVar::Bool(_) => pp_vartype::BOOL,
            PpVar::Int32(_) => pp_vartype::INT32,
            PpVar::Double(_) => pp_vartype::DOUBLE,
            PpVar::String(_) => pp_vartype::STRING,
            PpVar::Object(_) => pp_vartype::OBJECT,
            PpVar::Array(_) => pp_vartype::ARRAY,
            PpVar::Dictionary(_) => pp_vartype::DICTIONARY,
            PpVar::ArrayBuffer(_) => pp_vartype::ARRAY_BUFFER,
            PpVar::Resource(_) => pp_vartype::RESOURCE,
        }
    }

    /// The id of a reference-counted var (string, object, array, dictionary, array
    /// buffer); `None` for the others.
    pub fn id(self) -> Option<VarId> {
        match self {
            PpVar::String(id)
            | PpVar::Object(id)
            | PpVar::Array(id)
            | PpVar::Dictionary(id)
            | PpVar::ArrayBuffer(id) => Some(id),
            _ => None,
        }
    }

    /// Whether the type is reference counted (the value is a var id).
    pub fn is_ref_counted(self) -> bool {
        self.id().is_some()
    }

    /// The 8-byte value field as an `i64`: 0 for undefined and null, 1 or 0 for a bool,
    /// the `i32` of an int32 or resource in the low half (the high half 0), the bits of a
    /// double, the id of a reference-counted var.
    pub fn value_bits(self) -> i64 {
        match self {
            PpVar::Undefined | PpVar::Null => 0,
            PpVar::Bool(b) => i64::from(b),
            PpVar::Int32(i) | PpVar::Resource(i) => i64::from(i as u32),
            PpVar::Double(d) => d.to_bits() as i64,
            PpVar::String(id)
            | PpVar::Object(id)
            | PpVar::Array(id)
            | PpVar::Dictionary(id)
            | PpVar::ArrayBuffer(id) => id.0,
        }
    }

    /// The var of type `type_code` whose 8-byte value field is `value`. Bool, int32 and
    /// resource read the low half only (a bool is true when it is nonzero); an unknown type
    /// number gives [`PpVar::Undefined`]. A reference-counted type keeps its id as is, 0
    /// included: the store treats such a var as invalid.
    pub fn from_parts(type_code: i32, value: i64) -> PpVar {
        let low = value as i32;
        match type_code {
            pp_vartype::NULL => PpVar::Null,
            pp_vartype::BOOL => PpVar::Bool(low != 0),
            pp_vartype::INT32 => PpVar::Int32(low),
            pp_vartype::DOUBLE => PpVar::Double(f64::from_bits(value as u64)),
            pp_vartype::STRING => PpVar::String(VarId(value)),
            pp_vartype::OBJECT => PpVar::Object(VarId(value)),
            pp_vartype::ARRAY => PpVar::Array(VarId(value)),
            pp_vartype::DICTIONARY => PpVar::Dictionary(VarId(value)),
            pp_vartype::ARRAY_BUFFER => PpVar::ArrayBuffer(VarId(value)),
            pp_vartype::RESOURCE => PpVar::Resource(low),
            _ => PpVar::Undefined,
        }
    }

    /// The 16 bytes of the `PP_Var` in module memory: type, zero padding, value.
    pub fn to_bytes(self) -> [u8; 16] {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&self.type_code().to_le_bytes());
        b[8..16].copy_from_slice(&self.value_bits().to_le_bytes());
        b
    }

    /// The var 16 bytes of module memory hold, as [`PpVar::from_parts`] reads them (the
    /// padding is ignored; an unknown type number gives [`PpVar::Undefined`]).
    pub fn from_bytes(b: [u8; 16]) -> PpVar {
        let [t0, t1, t2, t3, _, _, _, _, v @ ..] = b;
        PpVar::from_parts(i32::from_le_bytes([t0, t1, t2, t3]), i64::from_le_bytes(v))
    }
}

/// The value behind an array buffer var.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArrayBuffer {
    bytes: Vec<u8>,
    mapped: Option<u32>,
    map_count: u32,
}

impl ArrayBuffer {
    /// The contents.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The contents, to change. The host keeps the length within
    /// [`MAX_ARRAY_BUFFER_LENGTH`].
    pub fn bytes_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    /// The length in bytes (saturating at `u32::MAX` should a host have grown it further).
    pub fn byte_length(&self) -> u32 {
        u32::try_from(self.bytes.len()).unwrap_or(u32::MAX)
    }

    /// Where the buffer is mapped in module memory, if it is (set by the host).
    pub fn mapped(&self) -> Option<u32> {
        self.mapped
    }

    /// Records where the buffer is mapped in module memory (`None`: not mapped).
    pub fn set_mapped(&mut self, address: Option<u32>) {
        self.mapped = address;
    }

    /// How many times the module mapped the buffer without unmapping it (kept by the host).
    pub fn map_count(&self) -> u32 {
        self.map_count
    }

    /// Sets the map count.
    pub fn set_map_count(&mut self, count: u32) {
        self.map_count = count;
    }
}

/// A reference-counted value.
enum Value {
    String(String),
    Array(Vec<PpVar>),
    Dictionary(BTreeMap<String, PpVar>),
    ArrayBuffer(ArrayBuffer),
}

struct Entry {
    refs: u32,
    value: Value,
}

impl Entry {
    /// Whether `var`'s type is this value's.
    fn matches(&self, var: PpVar) -> bool {
        matches!(
            (var, &self.value),
            (PpVar::String(_), Value::String(_))
                | (PpVar::Array(_), Value::Array(_))
                | (PpVar::Dictionary(_), Value::Dictionary(_))
                | (PpVar::ArrayBuffer(_), Value::ArrayBuffer(_))
        )
    }
}

/// The reference-counted values of one module instance (see the module documentation).
pub struct VarStore {
    vars: HashMap<i64, Entry>,
    next_id: i64,
    max_refs: u32,
}

impl Default for VarStore {
    fn default() -> Self {
        VarStore::new()
    }
}

impl std::fmt::Debug for VarStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VarStore")
            .field("live", &self.vars.len())
            .field("next_id", &self.next_id)
            .finish()
    }
}

impl VarStore {
    /// An empty store whose counts saturate at [`MAX_REF_COUNT`].
    pub fn new() -> VarStore {
        VarStore::with_max_ref_count(MAX_REF_COUNT)
    }

    /// An empty store whose reference counts saturate at `max` (at least 2), for tests of
    /// the saturation and hosts that want a lower ceiling.
    pub fn with_max_ref_count(max: u32) -> VarStore {
        VarStore {
            vars: HashMap::new(),
            next_id: 1,
            max_refs: max.max(2),
        }
    }

    fn entry(&self, var: PpVar) -> Option<&Entry> {
        let id = var.id()?;
        self.vars.get(&id.0).filter(|e| e.matches(var))
    }

    fn entry_mut(&mut self, var: PpVar) -> Option<&mut Entry> {
        let id = var.id()?;
        self.vars.get_mut(&id.0).filter(|e| e.matches(var))
    }

    /// Stores a new value with one reference; `None` when the ids are exhausted.
    fn insert(&mut self, value: Value) -> Option<i64> {
        if self.next_id == i64::MAX {
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.vars.insert(id, Entry { refs: 1, value });
        Some(id)
    }

    /// Whether `var` is valid: not reference counted, or naming a live value of its type.
    pub fn is_valid(&self, var: PpVar) -> bool {
        !var.is_ref_counted() || self.entry(var).is_some()
    }

    /// The reference count of a live reference-counted var; `None` otherwise.
    pub fn ref_count(&self, var: PpVar) -> Option<u32> {
        self.entry(var).map(|e| e.refs)
    }

    /// How many values are live.
    pub fn live_count(&self) -> usize {
        self.vars.len()
    }

    /// Adds a reference (`PPB_Var.AddRef`). Returns whether `var` was valid; a type that
    /// is not reference counted is valid and nothing happens. A count at the maximum stays.
    pub fn add_ref(&mut self, var: PpVar) -> bool {
        if !var.is_ref_counted() {
            return true;
        }
        let max = self.max_refs;
        match self.entry_mut(var) {
            Some(e) => {
                if e.refs < max {
                    e.refs += 1;
                }
                true
            }
            None => false,
        }
    }

    /// Drops a reference (`PPB_Var.Release`); at zero the value is freed and the vars it
    /// holds are released in turn. Returns whether `var` was valid, as
    /// [`add_ref`](Self::add_ref). A pinned count (at the maximum) stays.
    pub fn release(&mut self, var: PpVar) -> bool {
        if !var.is_ref_counted() {
            return true;
        }
        if self.entry(var).is_none() {
            return false;
        }
        let mut work = vec![var];
        while let Some(var) = work.pop() {
            let max = self.max_refs;
            let Some(e) = self.entry_mut(var) else {
                // A container held a var that was over-released elsewhere.
                continue;
            };
            if e.refs == max {
                continue;
            }
            e.refs -= 1;
            if e.refs > 0 {
                continue;
            }
            let Some(id) = var.id() else { continue };
            match self.vars.remove(&id.0).map(|e| e.value) {
                Some(Value::Array(elements)) => {
                    work.extend(elements.into_iter().filter(|v| v.is_ref_counted()))
                }
                Some(Value::Dictionary(map)) => {
                    work.extend(map.into_values().filter(|v| v.is_ref_counted()))
                }
                _ => {}
            }
        }
        true
    }

    // Strings.

    /// A new string var (`PPB_Var.VarFromUtf8`); invalid UTF-8 gives [`PpVar::Null`], as in
    /// Chrome.
    pub fn string_from_utf8(&mut self, bytes: &[u8]) -> PpVar {
        match std::str::from_utf8(bytes) {
            Ok(s) => self.string_from_str(s),
            Err(_) => PpVar::Null,
        }
    }

    /// A new string var holding `s` ([`PpVar::Null`] only if the ids are exhausted).
    pub fn string_from_str(&mut self, s: &str) -> PpVar {
        match self.insert(Value::String(s.to_owned())) {
            Some(id) => PpVar::String(VarId(id)),
            None => PpVar::Null,
        }
    }

    /// The text of a string var (`PPB_Var.VarToUtf8`); `None` if `var` is not a valid
    /// string var.
    pub fn string(&self, var: PpVar) -> Option<&str> {
        match &self.entry(var)?.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    // Arrays.

    /// A new empty array var (`PPB_VarArray.Create`).
    pub fn array_create(&mut self) -> PpVar {
        match self.insert(Value::Array(Vec::new())) {
            Some(id) => PpVar::Array(VarId(id)),
            None => PpVar::Null,
        }
    }

    /// The elements of an array var, borrowed (no references are added); `None` if `var`
    /// is not a valid array var.
    pub fn array_elements(&self, var: PpVar) -> Option<&[PpVar]> {
        match &self.entry(var)?.value {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }

    fn array_mut(&mut self, var: PpVar) -> Option<&mut Vec<PpVar>> {
        match &mut self.entry_mut(var)?.value {
            Value::Array(v) => Some(v),
            _ => None,
        }
    }

    /// Element `index` (`PPB_VarArray.Get`), with a reference added for the caller;
    /// [`PpVar::Undefined`] when `index` is out of range or `array` is not a valid array.
    pub fn array_get(&mut self, array: PpVar, index: u32) -> PpVar {
        let element = self
            .array_elements(array)
            .and_then(|v| v.get(index as usize).copied())
            .unwrap_or(PpVar::Undefined);
        self.add_ref(element);
        element
    }

    /// Sets element `index` to `value` (`PPB_VarArray.Set`): the array takes a reference
    /// on `value` and releases the element it replaces; an index at or past the length
    /// grows the array to `index + 1`, the new elements undefined. Returns false, changing
    /// nothing, when `array` is not a valid array, `value` is not valid, or the length would
    /// pass [`MAX_ARRAY_LENGTH`] (Chrome refuses only `index == u32::MAX`).
    pub fn array_set(&mut self, array: PpVar, index: u32, value: PpVar) -> bool {
        if index >= MAX_ARRAY_LENGTH || !self.is_valid(value) || self.array_mut(array).is_none() {
            return false;
        }
        self.add_ref(value);
        let Some(elements) = self.array_mut(array) else {
            return false;
        };
        let index = index as usize;
        if index >= elements.len() {
            elements.resize(index + 1, PpVar::Undefined);
        }
        let old = std::mem::replace(&mut elements[index], value);
        self.release(old);
        true
    }

    /// The length of an array var (`PPB_VarArray.GetLength`); 0 if `array` is not a valid
    /// array.
    pub fn array_length(&self, array: PpVar) -> u32 {
        self.array_elements(array)
            .map_or(0, |v| u32::try_from(v.len()).unwrap_or(u32::MAX))
    }

    /// Sets the length (`PPB_VarArray.SetLength`): dropped elements are released, new ones
    /// are undefined. False, changing nothing, if `array` is not a valid array or `length`
    /// passes [`MAX_ARRAY_LENGTH`].
    pub fn array_set_length(&mut self, array: PpVar, length: u32) -> bool {
        if length > MAX_ARRAY_LENGTH {
            return false;
        }
        let Some(elements) = self.array_mut(array) else {
            return false;
        };
        let length = length as usize;
        if length >= elements.len() {
            elements.resize(length, PpVar::Undefined);
            return true;
        }
        let dropped: Vec<PpVar> = elements.drain(length..).collect();
        for v in dropped {
            self.release(v);
        }
        true
    }

    /// Appends `value`, whose reference the array takes over (the caller's reference
    /// moves). False if `array` is not a valid array or is full.
    pub(crate) fn array_push_owned(&mut self, array: PpVar, value: PpVar) -> bool {
        match self.array_mut(array) {
            Some(elements) if elements.len() < MAX_ARRAY_LENGTH as usize => {
                elements.push(value);
                true
            }
            _ => false,
        }
    }

    // Dictionaries.

    /// A new empty dictionary var (`PPB_VarDictionary.Create`).
    pub fn dict_create(&mut self) -> PpVar {
        match self.insert(Value::Dictionary(BTreeMap::new())) {
            Some(id) => PpVar::Dictionary(VarId(id)),
            None => PpVar::Null,
        }
    }

    /// The entries of a dictionary var in key order, borrowed (no references are added);
    /// `None` if `var` is not a valid dictionary.
    pub fn dict_entries(&self, var: PpVar) -> Option<&BTreeMap<String, PpVar>> {
        match &self.entry(var)?.value {
            Value::Dictionary(m) => Some(m),
            _ => None,
        }
    }

    fn dict_mut(&mut self, var: PpVar) -> Option<&mut BTreeMap<String, PpVar>> {
        match &mut self.entry_mut(var)?.value {
            Value::Dictionary(m) => Some(m),
            _ => None,
        }
    }

    /// The value under `key` (a string var) with a reference added for the caller
    /// (`PPB_VarDictionary.Get`); [`PpVar::Undefined`] when there is none, `key` is not a
    /// valid string or `dict` not a valid dictionary.
    pub fn dict_get(&mut self, dict: PpVar, key: PpVar) -> PpVar {
        let value = match (self.dict_entries(dict), self.string(key)) {
            (Some(m), Some(k)) => m.get(k).copied().unwrap_or(PpVar::Undefined),
            _ => PpVar::Undefined,
        };
        self.add_ref(value);
        value
    }

    /// Sets `key` (a string var) to `value` (`PPB_VarDictionary.Set`): the dictionary
    /// takes a reference on `value` and releases the value it replaces. False, changing
    /// nothing, when `dict` is not a valid dictionary, `key` not a valid string var or
    /// `value` not valid.
    pub fn dict_set(&mut self, dict: PpVar, key: PpVar, value: PpVar) -> bool {
        let Some(key) = self.string(key).map(str::to_owned) else {
            return false;
        };
        if !self.is_valid(value) || self.dict_entries(dict).is_none() {
            return false;
        }
        // The new reference first: releasing the old value cannot free `value` when both
        // are the same var.
        self.add_ref(value);
        self.dict_insert_owned(dict, key, value)
    }

    /// Sets `key` to `value`, whose reference the dictionary takes over (the caller's
    /// reference moves), releasing the value it replaces. False if `dict` is not a valid
    /// dictionary.
    pub(crate) fn dict_insert_owned(&mut self, dict: PpVar, key: String, value: PpVar) -> bool {
        let Some(map) = self.dict_mut(dict) else {
            return false;
        };
        if let Some(old) = map.insert(key, value) {
            self.release(old);
        }
        true
    }

    /// Removes `key` (a string var) and releases its value (`PPB_VarDictionary.Delete`).
    /// Returns whether a value was removed.
    pub fn dict_delete(&mut self, dict: PpVar, key: PpVar) -> bool {
        let Some(key) = self.string(key).map(str::to_owned) else {
            return false;
        };
        let Some(old) = self.dict_mut(dict).and_then(|m| m.remove(&key)) else {
            return false;
        };
        self.release(old);
        true
    }

    /// Whether `dict` has `key` (a string var) (`PPB_VarDictionary.HasKey`); false for an
    /// invalid dictionary or key.
    pub fn dict_has_key(&self, dict: PpVar, key: PpVar) -> bool {
        match (self.dict_entries(dict), self.string(key)) {
            (Some(m), Some(k)) => m.contains_key(k),
            _ => false,
        }
    }

    /// A new array of new string vars, the keys in sorted (byte) order
    /// (`PPB_VarDictionary.GetKeys`); [`PpVar::Null`] if `dict` is not a valid dictionary.
    pub fn dict_get_keys(&mut self, dict: PpVar) -> PpVar {
        let Some(keys) = self
            .dict_entries(dict)
            .map(|m| m.keys().cloned().collect::<Vec<_>>())
        else {
            return PpVar::Null;
        };
        let array = self.array_create();
        if array == PpVar::Null {
            return PpVar::Null;
        }
        for key in keys {
            let s = self.string_from_str(&key);
            if s == PpVar::Null || !self.array_push_owned(array, s) {
                self.release(s);
                self.release(array);
                return PpVar::Null;
            }
        }
        array
    }

    // Array buffers.

    /// A new zeroed array buffer of `length` bytes (`PPB_VarArrayBuffer.Create`);
    /// [`PpVar::Null`] above [`MAX_ARRAY_BUFFER_LENGTH`].
    pub fn array_buffer_create(&mut self, length: u32) -> PpVar {
        if length > MAX_ARRAY_BUFFER_LENGTH {
            return PpVar::Null;
        }
        self.array_buffer_from(vec![0; length as usize])
    }

    /// A new array buffer holding `bytes`; [`PpVar::Null`] above
    /// [`MAX_ARRAY_BUFFER_LENGTH`].
    pub fn array_buffer_from(&mut self, bytes: Vec<u8>) -> PpVar {
        if bytes.len() > MAX_ARRAY_BUFFER_LENGTH as usize {
            return PpVar::Null;
        }
        let buffer = ArrayBuffer {
            bytes,
            mapped: None,
            map_count: 0,
        };
        match self.insert(Value::ArrayBuffer(buffer)) {
            Some(id) => PpVar::ArrayBuffer(VarId(id)),
            None => PpVar::Null,
        }
    }

    /// The buffer behind an array buffer var; `None` if `var` is not a valid one.
    pub fn array_buffer(&self, var: PpVar) -> Option<&ArrayBuffer> {
        match &self.entry(var)?.value {
            Value::ArrayBuffer(b) => Some(b),
            _ => None,
        }
    }

    /// The buffer behind an array buffer var, to change; `None` if `var` is not a valid one.
    pub fn array_buffer_mut(&mut self, var: PpVar) -> Option<&mut ArrayBuffer> {
        match &mut self.entry_mut(var)?.value {
            Value::ArrayBuffer(b) => Some(b),
            _ => None,
        }
    }

    /// The length in bytes (`PPB_VarArrayBuffer.ByteLength`); `None` if `var` is not a
    /// valid array buffer.
    pub fn array_buffer_byte_length(&self, var: PpVar) -> Option<u32> {
        self.array_buffer(var).map(ArrayBuffer::byte_length)
    }

    /// The contents of an array buffer var.
    pub fn array_buffer_bytes(&self, var: PpVar) -> Option<&[u8]> {
        self.array_buffer(var).map(ArrayBuffer::bytes)
    }

    /// The contents of an array buffer var, to change.
    pub fn array_buffer_bytes_mut(&mut self, var: PpVar) -> Option<&mut Vec<u8>> {
        self.array_buffer_mut(var).map(ArrayBuffer::bytes_mut)
    }

    /// Where an array buffer is mapped in module memory; `None` if it is not mapped or
    /// `var` is not a valid array buffer.
    pub fn array_buffer_mapped(&self, var: PpVar) -> Option<u32> {
        self.array_buffer(var).and_then(ArrayBuffer::mapped)
    }

    /// Records where an array buffer is mapped (`None`: unmapped). False if `var` is not a
    /// valid array buffer.
    pub fn set_array_buffer_mapped(&mut self, var: PpVar, address: Option<u32>) -> bool {
        match self.array_buffer_mut(var) {
            Some(b) => {
                b.set_mapped(address);
                true
            }
            None => false,
        }
    }
}
