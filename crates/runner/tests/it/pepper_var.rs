//! The host's model of Pepper vars (`pexe2wasm_runner::pepper::var`): the 16-byte layout,
//! reference counts and frees, arrays, dictionaries, array buffers, and bad input.

use pexe2wasm_runner::pepper::var::{
    PpVar, VarId, VarStore, MAX_ARRAY_BUFFER_LENGTH, MAX_ARRAY_LENGTH,
};

fn string(store: &mut VarStore, s: &str) -> PpVar {
    let v = store.string_from_utf8(s.as_bytes());
    assert!(matches!(v, PpVar::String(_)), "{v:?}");
    v
}

// Layout.

#[test]
fn every_variant_round_trips_through_its_16_bytes() {
    let vars = [
        PpVar::Undefined,
        PpVar::Null,
        PpVar::Bool(false),
        PpVar::Bool(true),
        PpVar::Int32(0),
        PpVar::Int32(-1),
        PpVar::Int32(i32::MAX),
        PpVar::Int32(i32::MIN),
        PpVar::Double(1.5),
        PpVar::Double(-0.0),
        PpVar::Double(f64::INFINITY),
        PpVar::String(VarId(1)),
        PpVar::Object(VarId(2)),
        PpVar::Array(VarId(3)),
        PpVar::Dictionary(VarId(i64::MAX)),
        PpVar::ArrayBuffer(VarId(-7)),
        PpVar::Resource(0),
        PpVar::Resource(-5),
        PpVar::Resource(123_456),
    ];
    for v in vars {
        let b = v.to_bytes();
        assert_eq!(&b[4..8], &[0; 4], "padding of {v:?}");
        assert_eq!(
            i32::from_le_bytes(b[0..4].try_into().unwrap()),
            v.type_code()
        );
        let back = PpVar::from_bytes(b);
        match (v, back) {
            (PpVar::Double(a), PpVar::Double(b)) => assert_eq!(a.to_bits(), b.to_bits()),
            _ => assert_eq!(back, v),
        }
        assert_eq!(PpVar::from_parts(v.type_code(), v.value_bits()), back);
    }
    // NaN keeps its bits.
    let nan = f64::from_bits(0x7ff8_0000_0000_1234);
    let PpVar::Double(d) = PpVar::from_bytes(PpVar::Double(nan).to_bytes()) else {
        panic!("not a double");
    };
    assert_eq!(d.to_bits(), nan.to_bits());
}

#[test]
fn the_bytes_are_chromes_layout() {
    let codes = [
        (PpVar::Undefined, 0),
        (PpVar::Null, 1),
        (PpVar::Bool(true), 2),
        (PpVar::Int32(1), 3),
        (PpVar::Double(1.0), 4),
        (PpVar::String(VarId(1)), 5),
        (PpVar::Object(VarId(1)), 6),
        (PpVar::Array(VarId(1)), 7),
        (PpVar::Dictionary(VarId(1)), 8),
        (PpVar::ArrayBuffer(VarId(1)), 9),
        (PpVar::Resource(1), 10),
    ];
    for (v, code) in codes {
        assert_eq!(v.type_code(), code, "{v:?}");
    }
    assert_eq!(
        PpVar::Int32(-2).to_bytes(),
        [3, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0]
    );
    assert_eq!(
        PpVar::Bool(true).to_bytes(),
        [2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    );
    let mut expected = [0u8; 16];
    expected[0] = 4;
    expected[8..].copy_from_slice(&1.5f64.to_le_bytes());
    assert_eq!(PpVar::Double(1.5).to_bytes(), expected);
    expected[0] = 7;
    expected[8..].copy_from_slice(&0x0102_0304_0506_0708i64.to_le_bytes());
    assert_eq!(
        PpVar::Array(VarId(0x0102_0304_0506_0708)).to_bytes(),
        expected
    );
}

#[test]
fn from_bytes_reads_unknown_types_as_undefined_and_ignores_padding_and_high_halves() {
    let mut b = [0xaau8; 16];
    b[0..4].copy_from_slice(&11i32.to_le_bytes());
    assert_eq!(PpVar::from_bytes(b), PpVar::Undefined);
    b[0..4].copy_from_slice(&(-1i32).to_le_bytes());
    assert_eq!(PpVar::from_bytes(b), PpVar::Undefined);
    // Int32 and resource read the low half; any nonzero bool is true.
    assert_eq!(PpVar::from_parts(3, 0x7777_7777_0000_0005), PpVar::Int32(5));
    assert_eq!(PpVar::from_parts(10, -1), PpVar::Resource(-1));
    assert_eq!(PpVar::from_parts(2, 0x1_0000_0000), PpVar::Bool(false));
    assert_eq!(PpVar::from_parts(2, 42), PpVar::Bool(true));
    // A reference type with id 0 stays as it is, and the store rejects it.
    let zero = PpVar::from_parts(5, 0);
    assert_eq!(zero, PpVar::String(VarId(0)));
    let mut store = VarStore::new();
    assert!(!store.add_ref(zero));
    assert!(!store.release(zero));
    assert_eq!(store.string(zero), None);
}

// Reference counts.

#[test]
fn ids_start_at_1_and_are_never_reused() {
    let mut store = VarStore::new();
    let a = store.string_from_utf8(b"a");
    assert_eq!(a, PpVar::String(VarId(1)));
    assert!(store.release(a));
    let b = store.array_create();
    assert_eq!(b, PpVar::Array(VarId(2)));
    let c = store.dict_create();
    assert_eq!(c, PpVar::Dictionary(VarId(3)));
    // The freed id stays dead.
    assert_eq!(store.string(a), None);
    assert!(!store.add_ref(a));
}

#[test]
fn add_ref_and_release_count_and_free() {
    let mut store = VarStore::new();
    let s = string(&mut store, "hello");
    assert_eq!(store.ref_count(s), Some(1));
    assert!(store.add_ref(s));
    assert!(store.add_ref(s));
    assert_eq!(store.ref_count(s), Some(3));
    assert!(store.release(s));
    assert!(store.release(s));
    assert_eq!(store.string(s), Some("hello"));
    assert_eq!(store.live_count(), 1);
    assert!(store.release(s));
    assert_eq!(store.live_count(), 0);
    assert_eq!(store.ref_count(s), None);
    assert_eq!(store.string(s), None);
    // Over-releasing is refused, not a panic.
    assert!(!store.release(s));
    assert!(!store.add_ref(s));
}

#[test]
fn scalars_are_valid_and_not_counted() {
    let mut store = VarStore::new();
    for v in [
        PpVar::Undefined,
        PpVar::Null,
        PpVar::Bool(true),
        PpVar::Int32(3),
        PpVar::Double(2.5),
        PpVar::Resource(9),
    ] {
        assert!(store.add_ref(v), "{v:?}");
        assert!(store.release(v), "{v:?}");
        assert_eq!(store.ref_count(v), None);
        assert!(store.is_valid(v));
    }
    assert_eq!(store.live_count(), 0);
}

#[test]
fn a_var_of_the_wrong_type_is_invalid() {
    let mut store = VarStore::new();
    let s = string(&mut store, "x");
    let VarId(id) = s.id().unwrap();
    let as_array = PpVar::Array(VarId(id));
    assert!(!store.is_valid(as_array));
    assert!(!store.add_ref(as_array));
    assert!(!store.release(as_array));
    assert_eq!(store.array_length(as_array), 0);
    assert_eq!(store.ref_count(s), Some(1));
    // Objects cannot be created, so none is ever valid.
    assert!(!store.add_ref(PpVar::Object(VarId(id))));
    assert!(!store.is_valid(PpVar::Object(VarId(1))));
}

#[test]
fn ref_counts_saturate_and_pin_the_value() {
    let mut store = VarStore::with_max_ref_count(3);
    let s = string(&mut store, "pinned");
    assert!(store.add_ref(s));
    assert!(store.add_ref(s));
    assert_eq!(store.ref_count(s), Some(3));
    assert!(store.add_ref(s));
    assert_eq!(store.ref_count(s), Some(3));
    for _ in 0..10 {
        assert!(store.release(s));
    }
    assert_eq!(store.ref_count(s), Some(3));
    assert_eq!(store.string(s), Some("pinned"));
    // Below the ceiling, counts behave.
    let t = string(&mut store, "t");
    assert!(store.add_ref(t));
    assert!(store.release(t));
    assert!(store.release(t));
    assert_eq!(store.string(t), None);
}

#[test]
fn nested_containers_are_freed_recursively() {
    let mut store = VarStore::new();
    let outer = store.array_create();
    let inner = store.array_create();
    let dict = store.dict_create();
    let key = string(&mut store, "k");
    let s = string(&mut store, "leaf");
    let buf = store.array_buffer_create(8);
    assert!(store.dict_set(dict, key, s));
    assert!(store.array_set(inner, 0, dict));
    assert!(store.array_set(inner, 1, buf));
    assert!(store.array_set(outer, 0, inner));
    assert!(store.array_set(outer, 1, s));
    for v in [inner, dict, key, s, buf] {
        assert!(store.release(v));
    }
    // Only the containers' references remain.
    assert_eq!(store.ref_count(s), Some(2));
    assert_eq!(store.ref_count(inner), Some(1));
    assert_eq!(store.live_count(), 5);
    assert!(store.release(outer));
    assert_eq!(store.live_count(), 0);
}

#[test]
fn a_value_shared_by_two_containers_lives_until_both_are_gone() {
    let mut store = VarStore::new();
    let a = store.array_create();
    let b = store.array_create();
    let s = string(&mut store, "shared");
    assert!(store.array_set(a, 0, s));
    assert!(store.array_set(b, 0, s));
    assert!(store.release(s));
    assert!(store.release(a));
    assert_eq!(store.string(s), Some("shared"));
    assert!(store.release(b));
    assert_eq!(store.live_count(), 0);
}

#[test]
fn deep_nesting_is_freed_without_recursion() {
    let mut store = VarStore::new();
    let root = store.array_create();
    let mut parent = root;
    for _ in 0..100_000 {
        let child = store.array_create();
        assert!(store.array_set(parent, 0, child));
        assert!(store.release(child));
        parent = child;
    }
    let d = store.dict_create();
    let key = string(&mut store, "k");
    assert!(store.dict_set(d, key, root));
    assert!(store.release(key));
    assert!(store.release(root));
    assert_eq!(store.live_count(), 100_002);
    assert!(store.release(d));
    assert_eq!(store.live_count(), 0);
}

#[test]
fn a_container_that_holds_itself_is_not_freed_like_in_chrome() {
    let mut store = VarStore::new();
    let a = store.array_create();
    assert!(store.array_set(a, 0, a));
    assert_eq!(store.ref_count(a), Some(2));
    assert!(store.release(a));
    assert_eq!(store.live_count(), 1);
}

// Strings.

#[test]
fn strings_hold_utf8_and_invalid_utf8_gives_null() {
    let mut store = VarStore::new();
    let s = store.string_from_utf8("héllo\0wörld".as_bytes());
    assert_eq!(store.string(s), Some("héllo\0wörld"));
    let empty = store.string_from_utf8(b"");
    assert_eq!(store.string(empty), Some(""));
    assert_eq!(store.string_from_utf8(&[0x66, 0xff, 0x6f]), PpVar::Null);
    assert_eq!(store.string_from_utf8(&[0xed, 0xa0, 0x80]), PpVar::Null); // a surrogate
    assert_eq!(store.string_from_utf8(&[0xc3]), PpVar::Null); // cut short
    assert_eq!(store.live_count(), 2);
    assert_eq!(store.string(PpVar::Int32(5)), None);
}

// Arrays.

#[test]
fn array_get_and_set() {
    let mut store = VarStore::new();
    let a = store.array_create();
    assert_eq!(store.array_length(a), 0);
    assert!(store.array_set(a, 0, PpVar::Int32(7)));
    assert!(store.array_set(a, 1, PpVar::Double(0.5)));
    assert_eq!(store.array_length(a), 2);
    assert_eq!(store.array_get(a, 0), PpVar::Int32(7));
    assert_eq!(store.array_get(a, 1), PpVar::Double(0.5));
    assert_eq!(store.array_get(a, 2), PpVar::Undefined);
    assert_eq!(store.array_get(a, u32::MAX), PpVar::Undefined);
    // Replacing an element.
    assert!(store.array_set(a, 0, PpVar::Bool(true)));
    assert_eq!(
        store.array_elements(a),
        Some(&[PpVar::Bool(true), PpVar::Double(0.5)][..])
    );
}

#[test]
fn array_get_adds_a_reference_for_the_caller() {
    let mut store = VarStore::new();
    let a = store.array_create();
    let s = string(&mut store, "e");
    assert!(store.array_set(a, 0, s));
    assert!(store.release(s));
    assert_eq!(store.ref_count(s), Some(1));
    let got = store.array_get(a, 0);
    assert_eq!(got, s);
    assert_eq!(store.ref_count(s), Some(2));
    assert!(store.release(a));
    assert_eq!(store.string(got), Some("e"));
    assert!(store.release(got));
    assert_eq!(store.live_count(), 0);
}

#[test]
fn array_set_past_the_end_grows_with_undefined() {
    let mut store = VarStore::new();
    let a = store.array_create();
    assert!(store.array_set(a, 3, PpVar::Int32(3)));
    assert_eq!(store.array_length(a), 4);
    assert_eq!(
        store.array_elements(a).unwrap(),
        &[
            PpVar::Undefined,
            PpVar::Undefined,
            PpVar::Undefined,
            PpVar::Int32(3)
        ]
    );
}

#[test]
fn array_set_releases_the_replaced_element_and_holds_the_new_one() {
    let mut store = VarStore::new();
    let a = store.array_create();
    let old = string(&mut store, "old");
    let new = string(&mut store, "new");
    assert!(store.array_set(a, 0, old));
    assert!(store.release(old));
    assert!(store.array_set(a, 0, new));
    assert_eq!(store.string(old), None);
    assert_eq!(store.ref_count(new), Some(2));
    // Setting the element to itself keeps it alive.
    assert!(store.release(new));
    assert!(store.array_set(a, 0, new));
    assert_eq!(store.ref_count(new), Some(1));
    assert_eq!(store.string(new), Some("new"));
}

#[test]
fn array_set_refuses_bad_input() {
    let mut store = VarStore::new();
    let a = store.array_create();
    let d = store.dict_create();
    assert!(!store.array_set(d, 0, PpVar::Int32(1)));
    assert!(!store.array_set(PpVar::Int32(1), 0, PpVar::Int32(1)));
    assert!(!store.array_set(a, 0, PpVar::String(VarId(999))));
    assert!(!store.array_set(a, u32::MAX, PpVar::Int32(1)));
    assert!(!store.array_set(a, MAX_ARRAY_LENGTH, PpVar::Int32(1)));
    assert_eq!(store.array_length(a), 0);
    assert_eq!(store.array_get(d, 0), PpVar::Undefined);
    assert_eq!(store.array_length(d), 0);
}

#[test]
fn array_set_length_shrinks_and_grows() {
    let mut store = VarStore::new();
    let a = store.array_create();
    let s = string(&mut store, "dropped");
    assert!(store.array_set(a, 0, PpVar::Int32(0)));
    assert!(store.array_set(a, 1, s));
    assert!(store.release(s));
    assert!(store.array_set_length(a, 5));
    assert_eq!(store.array_length(a), 5);
    assert_eq!(store.array_get(a, 4), PpVar::Undefined);
    assert!(store.array_set_length(a, 1));
    assert_eq!(store.array_length(a), 1);
    assert_eq!(store.string(s), None, "the dropped element is released");
    assert_eq!(store.live_count(), 1);
    assert!(store.array_set_length(a, 0));
    assert_eq!(store.array_elements(a), Some(&[][..]));
    assert!(!store.array_set_length(a, MAX_ARRAY_LENGTH + 1));
    assert!(!store.array_set_length(PpVar::Null, 1));
    assert_eq!(store.array_length(a), 0);
}

// Dictionaries.

#[test]
fn dictionary_set_get_has_delete() {
    let mut store = VarStore::new();
    let d = store.dict_create();
    let k = string(&mut store, "key");
    let missing = string(&mut store, "missing");
    let v = string(&mut store, "value");
    assert!(store.dict_set(d, k, v));
    assert!(store.release(v));
    assert!(store.dict_has_key(d, k));
    assert!(!store.dict_has_key(d, missing));
    let got = store.dict_get(d, k);
    assert_eq!(store.string(got), Some("value"));
    assert_eq!(store.ref_count(got), Some(2), "dict_get adds a reference");
    assert!(store.release(got));
    assert_eq!(store.dict_get(d, missing), PpVar::Undefined);
    // Replacing releases the old value.
    assert!(store.dict_set(d, k, PpVar::Int32(1)));
    assert_eq!(store.string(v), None);
    assert_eq!(store.dict_get(d, k), PpVar::Int32(1));
    assert!(store.dict_delete(d, k));
    assert!(!store.dict_delete(d, k));
    assert!(!store.dict_has_key(d, k));
    assert_eq!(store.dict_entries(d).unwrap().len(), 0);
}

#[test]
fn dictionary_keys_must_be_string_vars() {
    let mut store = VarStore::new();
    let d = store.dict_create();
    let a = store.array_create();
    for key in [
        PpVar::Int32(1),
        PpVar::Null,
        PpVar::Undefined,
        a,
        PpVar::String(VarId(999)),
    ] {
        assert!(!store.dict_set(d, key, PpVar::Int32(1)), "{key:?}");
        assert_eq!(store.dict_get(d, key), PpVar::Undefined);
        assert!(!store.dict_has_key(d, key));
        assert!(!store.dict_delete(d, key));
    }
    let k = string(&mut store, "k");
    assert!(!store.dict_set(a, k, PpVar::Int32(1)), "not a dictionary");
    assert!(
        !store.dict_set(d, k, PpVar::Array(VarId(999))),
        "dead value"
    );
    assert!(store.dict_entries(d).unwrap().is_empty());
    assert_eq!(store.ref_count(k), Some(1));
}

#[test]
fn dictionary_keys_are_sorted_and_get_keys_makes_new_strings() {
    let mut store = VarStore::new();
    let d = store.dict_create();
    for key in ["zeta", "alpha", "Beta", "", "é", "alpha2"] {
        let k = string(&mut store, key);
        assert!(store.dict_set(d, k, PpVar::Bool(true)));
        assert!(store.release(k));
    }
    let keys = store.dict_get_keys(d);
    let elements = store.array_elements(keys).unwrap().to_vec();
    let texts: Vec<&str> = elements.iter().map(|&k| store.string(k).unwrap()).collect();
    assert_eq!(texts, ["", "Beta", "alpha", "alpha2", "zeta", "é"]);
    for &k in &elements {
        assert_eq!(store.ref_count(k), Some(1));
    }
    assert_eq!(store.ref_count(keys), Some(1));
    assert_eq!(store.live_count(), 1 + 1 + 6);
    assert!(store.release(keys));
    assert_eq!(store.live_count(), 1);
    assert_eq!(store.dict_get_keys(PpVar::Int32(0)), PpVar::Null);
    let a = store.array_create();
    assert_eq!(store.dict_get_keys(a), PpVar::Null);
    let empty = store.dict_create();
    let none = store.dict_get_keys(empty);
    assert_eq!(store.array_length(none), 0);
}

#[test]
fn a_dictionary_value_set_to_itself_stays_alive() {
    let mut store = VarStore::new();
    let d = store.dict_create();
    let k = string(&mut store, "k");
    let v = string(&mut store, "v");
    assert!(store.dict_set(d, k, v));
    assert!(store.release(v));
    assert!(store.dict_set(d, k, v));
    assert_eq!(store.ref_count(v), Some(1));
    assert!(store.release(d));
    assert!(store.release(k));
    assert_eq!(store.live_count(), 0);
}

// Array buffers.

#[test]
fn array_buffers() {
    let mut store = VarStore::new();
    let b = store.array_buffer_create(16);
    assert_eq!(store.array_buffer_byte_length(b), Some(16));
    assert_eq!(store.array_buffer_bytes(b), Some(&[0u8; 16][..]));
    store.array_buffer_bytes_mut(b).unwrap()[3] = 9;
    assert_eq!(store.array_buffer_bytes(b).unwrap()[3], 9);
    assert_eq!(store.array_buffer_mapped(b), None);
    assert!(store.set_array_buffer_mapped(b, Some(0x1000)));
    assert_eq!(store.array_buffer_mapped(b), Some(0x1000));
    let buffer = store.array_buffer_mut(b).unwrap();
    buffer.set_map_count(2);
    assert_eq!(buffer.map_count(), 2);
    assert_eq!(buffer.mapped(), Some(0x1000));
    assert!(store.set_array_buffer_mapped(b, None));
    assert_eq!(store.array_buffer(b).unwrap().mapped(), None);

    let from = store.array_buffer_from(vec![1, 2, 3]);
    assert_eq!(store.array_buffer_bytes(from), Some(&[1u8, 2, 3][..]));
    let empty = store.array_buffer_create(0);
    assert_eq!(store.array_buffer_byte_length(empty), Some(0));

    // Not an array buffer.
    let s = string(&mut store, "s");
    assert_eq!(store.array_buffer_byte_length(s), None);
    assert_eq!(store.array_buffer_bytes(PpVar::Null), None);
    assert!(!store.set_array_buffer_mapped(s, Some(4)));
    assert!(store.release(b));
    assert_eq!(store.array_buffer_byte_length(b), None);
}

#[test]
fn array_buffers_above_the_cap_are_refused() {
    let mut store = VarStore::new();
    assert_eq!(
        store.array_buffer_create(MAX_ARRAY_BUFFER_LENGTH + 1),
        PpVar::Null
    );
    assert_eq!(store.array_buffer_create(u32::MAX), PpVar::Null);
    assert_eq!(store.live_count(), 0);
    assert_eq!(MAX_ARRAY_BUFFER_LENGTH, 1 << 30);
}
