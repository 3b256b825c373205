//! The command-line host's PPB functions against the headers' contracts, called one by
//! one (`pepper_support::Harness`).

use pexe2wasm_runner::pepper::var::PpVar;
use pexe2wasm_runner::pepper::{pp_error, INSTANCE};
use pexe2wasm_runner::wasmtime::Val;

use crate::pepper_support::Harness;

const V11: &str = "PPB_Var;1.1";

#[test]
fn var_to_utf8_gives_the_bytes_their_length_and_a_stable_pointer() {
    let mut h = Harness::new();
    let s = h.make_string("héllo", 0x1000);
    assert!(matches!(s, PpVar::String(_)), "{s:?}");
    let p = h.call(V11, "VarToUtf8", &[0x1000, 0x2000]) as u32;
    assert_ne!(p, 0);
    assert_eq!(h.read_u32(0x2000), 6);
    assert_eq!(h.read(p, 7), b"h\xc3\xa9llo\0");
    // The pointer stays valid (and the same) while the var lives.
    assert_eq!(h.call(V11, "VarToUtf8", &[0x1000, 0x2000]) as u32, p);
    // A var that is not a string: NULL and length 0.
    h.write_var(0x1100, PpVar::Int32(7));
    h.write(0x2000, &[9, 9, 9, 9]);
    assert_eq!(h.call(V11, "VarToUtf8", &[0x1100, 0x2000]), 0);
    assert_eq!(h.read_u32(0x2000), 0);
}

#[test]
fn invalid_utf8_gives_null_and_every_version_reads_the_same_store() {
    let mut h = Harness::new();
    h.write(0x3000, &[0xff, 0xfe]);
    h.call(V11, "VarFromUtf8", &[0x1000, 0x3000, 2]);
    assert_eq!(h.read_var(0x1000), PpVar::Null);
    // 1.0 takes a module argument first.
    h.write(0x3000, b"abc");
    h.call("PPB_Var;1.0", "VarFromUtf8", &[0x1000, 1, 0x3000, 3]);
    let v = h.read_var(0x1000);
    assert_eq!(h.state().vars().string(v), Some("abc"));
}

#[test]
fn references_count_and_the_last_release_frees_the_string_and_its_copy() {
    let mut h = Harness::new();
    let s = h.make_string("x", 0x1000);
    let st = h.state();
    assert_eq!(st.vars().ref_count(s), Some(1));
    h.call(V11, "AddRef", &[0x1000]);
    assert_eq!(st.vars().ref_count(s), Some(2));
    let p1 = h.call(V11, "VarToUtf8", &[0x1000, 0x2000]);
    h.call(V11, "Release", &[0x1000]);
    h.call(V11, "Release", &[0x1000]);
    assert_eq!(st.vars().ref_count(s), None);
    assert_eq!(st.vars().live_count(), 0);
    // The freed copy's block is handed out again for the next string of its size.
    h.make_string("y", 0x1000);
    let p2 = h.call(V11, "VarToUtf8", &[0x1000, 0x2000]);
    assert_eq!(p1, p2);
    // Releasing a dead var is harmless.
    h.write_var(0x1100, s);
    h.call(V11, "Release", &[0x1100]);
}

#[test]
fn arrays_and_dictionaries_follow_the_headers() {
    let mut h = Harness::new();
    h.call("PPB_VarArray;1.0", "Create", &[0x1000]);
    h.write_var(0x1100, PpVar::Int32(42));
    assert_eq!(h.call("PPB_VarArray;1.0", "Set", &[0x1000, 3, 0x1100]), 1);
    assert_eq!(h.call("PPB_VarArray;1.0", "GetLength", &[0x1000]), 4);
    h.call("PPB_VarArray;1.0", "Get", &[0x1200, 0x1000, 3]);
    assert_eq!(h.read_var(0x1200), PpVar::Int32(42));
    h.call("PPB_VarArray;1.0", "Get", &[0x1200, 0x1000, 0]);
    assert_eq!(h.read_var(0x1200), PpVar::Undefined);
    // Not an array: length 0, Set refused.
    assert_eq!(h.call("PPB_VarArray;1.0", "GetLength", &[0x1100]), 0);
    assert_eq!(h.call("PPB_VarArray;1.0", "Set", &[0x1100, 0, 0x1100]), 0);

    const D: &str = "PPB_VarDictionary;1.0";
    h.call(D, "Create", &[0x1300]);
    h.make_string("b", 0x1400);
    h.make_string("a", 0x1500);
    assert_eq!(h.call(D, "Set", &[0x1300, 0x1400, 0x1100]), 1);
    assert_eq!(h.call(D, "Set", &[0x1300, 0x1500, 0x1100]), 1);
    // A key that is not a string is refused.
    assert_eq!(h.call(D, "Set", &[0x1300, 0x1100, 0x1100]), 0);
    assert_eq!(h.call(D, "HasKey", &[0x1300, 0x1400]), 1);
    h.call(D, "GetKeys", &[0x1600, 0x1300]);
    assert_eq!(h.call("PPB_VarArray;1.0", "GetLength", &[0x1600]), 2);
    h.call("PPB_VarArray;1.0", "Get", &[0x1700, 0x1600, 0]);
    let first = h.read_var(0x1700);
    assert_eq!(
        h.state().vars().string(first),
        Some("a"),
        "keys come sorted"
    );
    h.call(D, "Delete", &[0x1300, 0x1400]);
    assert_eq!(h.call(D, "HasKey", &[0x1300, 0x1400]), 0);
}

#[test]
fn array_buffers_map_into_module_memory_and_messages_carry_what_the_app_wrote() {
    let mut h = Harness::new();
    const B: &str = "PPB_VarArrayBuffer;1.0";
    h.call(B, "Create", &[0x1000, 5]);
    assert_eq!(h.call(B, "ByteLength", &[0x1000, 0x2000]), 1);
    assert_eq!(h.read_u32(0x2000), 5);
    let p = h.call(B, "Map", &[0x1000]) as u32;
    assert_ne!(p, 0);
    assert_eq!(h.read(p, 5), [0; 5], "a new buffer is zeroed");
    h.write(p, b"hello");
    h.call(B, "Unmap", &[0x1000]);
    assert_eq!(h.call(B, "Map", &[0x1000]) as u32, p);
    h.call("PPB_Messaging;1.0", "PostMessage", &[INSTANCE, 0x1000]);
    let messages = h.sink.messages.lock().unwrap().clone();
    assert_eq!(messages, [r#"{"$arraybuffer":"aGVsbG8="}"#]);
    // Not an array buffer: ByteLength false, Map NULL.
    h.write_var(0x1100, PpVar::Int32(1));
    assert_eq!(h.call(B, "ByteLength", &[0x1100, 0x2000]), 0);
    assert_eq!(h.call(B, "Map", &[0x1100]), 0);
}

#[test]
fn messages_and_console_lines_reach_the_sink_and_a_wrong_instance_is_ignored() {
    let mut h = Harness::new();
    h.make_string("to the page", 0x1000);
    h.call("PPB_Messaging;1.0", "PostMessage", &[INSTANCE, 0x1000]);
    h.call("PPB_Messaging;1.0", "PostMessage", &[INSTANCE + 1, 0x1000]);
    h.write_var(0x1100, PpVar::Double(1.5));
    h.call("PPB_Messaging;1.2", "PostMessage", &[INSTANCE, 0x1100]);
    h.call("PPB_Console;1.0", "Log", &[INSTANCE, 2, 0x1000]);
    assert_eq!(
        h.sink.messages.lock().unwrap().clone(),
        ["to the page", "1.5"]
    );
    assert_eq!(
        h.sink.console.lock().unwrap().clone(),
        [(2, "to the page".to_string())]
    );
}

#[test]
fn core_and_view_answer_without_a_run() {
    let mut h = Harness::new();
    assert_eq!(h.call("PPB_Core;1.0", "IsMainThread", &[]), 1);
    let t1 = h.try_call("PPB_Core;1.0", "GetTimeTicks", &[]).unwrap();
    let t2 = h.try_call("PPB_Core;1.0", "GetTimeTicks", &[]).unwrap();
    match (&t1[0], &t2[0]) {
        (Val::F64(a), Val::F64(b)) => assert!(f64::from_bits(*b) >= f64::from_bits(*a)),
        other => panic!("{other:?}"),
    }
    // No such view: false everywhere, nothing written.
    h.write(0x1000, &[7; 16]);
    assert_eq!(h.call("PPB_View;1.2", "IsView", &[0x999]), 0);
    assert_eq!(h.call("PPB_View;1.2", "GetRect", &[0x999, 0x1000]), 0);
    assert_eq!(h.read(0x1000, 16), [7; 16]);
    // A message loop that does not exist.
    assert_eq!(
        h.call("PPB_MessageLoop;1.0", "AttachToCurrentThread", &[0x999]),
        pp_error::BADRESOURCE
    );
}

#[test]
fn resources_live_while_referenced_and_message_loops_refuse_wrong_use() {
    const ML: &str = "PPB_MessageLoop;1.0";
    let mut h = Harness::new();
    // Only this instance can make a loop.
    assert_eq!(h.call(ML, "Create", &[INSTANCE + 7]), 0);
    let l = h.call(ML, "Create", &[INSTANCE]);
    assert_ne!(l, 0);
    let st = h.state();
    assert_eq!(st.resources().ref_count(l), Some(1));
    h.call("PPB_Core;1.0", "AddRefResource", &[l]);
    assert_eq!(st.resources().ref_count(l), Some(2));
    // Run on a loop that is not this thread's: wrong thread. PostQuit is fine.
    assert_eq!(h.call(ML, "Run", &[l]), pp_error::WRONG_THREAD);
    assert_eq!(h.call(ML, "PostQuit", &[l, 0]), pp_error::OK);
    // PostWork without a function is refused; with one it waits for the loop's thread.
    h.write(0x1000, &[0; 12]);
    let no_func = h.try_call(
        ML,
        "PostWork",
        &[Val::I32(l), Val::I32(0x1000), Val::I64(0)],
    );
    assert_eq!(no_func.unwrap()[0].unwrap_i32(), pp_error::BADARGUMENT);
    h.write(0x1000, &[5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let queued = h.try_call(
        ML,
        "PostWork",
        &[Val::I32(l), Val::I32(0x1000), Val::I64(0)],
    );
    assert_eq!(queued.unwrap()[0].unwrap_i32(), pp_error::OK);
    // The main thread cannot attach a loop (it has one).
    assert_eq!(
        h.call(ML, "AttachToCurrentThread", &[l]),
        pp_error::INPROGRESS
    );
    // After a destroying quit, new work is refused.
    assert_eq!(h.call(ML, "PostQuit", &[l, 1]), pp_error::OK);
    let refused = h.try_call(
        ML,
        "PostWork",
        &[Val::I32(l), Val::I32(0x1000), Val::I64(0)],
    );
    assert_eq!(refused.unwrap()[0].unwrap_i32(), pp_error::FAILED);
    // Two releases free it; a third is harmless; then it is a bad resource.
    h.call("PPB_Core;1.0", "ReleaseResource", &[l]);
    h.call("PPB_Core;1.0", "ReleaseResource", &[l]);
    assert_eq!(st.resources().ref_count(l), None);
    h.call("PPB_Core;1.0", "ReleaseResource", &[l]);
    assert_eq!(h.call(ML, "PostQuit", &[l, 0]), pp_error::BADRESOURCE);
    // A var naming a resource, both ways (PPB_Var;1.2).
    let l2 = h.call(ML, "Create", &[INSTANCE]);
    h.call("PPB_Var;1.2", "VarFromResource", &[0x1100, l2]);
    assert_eq!(h.read_var(0x1100), PpVar::Resource(l2));
    assert_eq!(h.call("PPB_Var;1.2", "VarToResource", &[0x1100]), l2);
    assert_eq!(
        st.resources().ref_count(l2),
        Some(2),
        "VarToResource adds a reference"
    );
    h.call("PPB_Var;1.2", "VarFromResource", &[0x1100, 0x7777]);
    assert_eq!(h.read_var(0x1100), PpVar::Null);
}

#[test]
fn message_handlers_are_refused_on_the_main_loop_and_for_bad_arguments() {
    let mut h = Harness::new();
    const M: &str = "PPB_Messaging;1.2";
    // A handler table {HandleMessage, HandleBlockingMessage, Destroy}.
    h.write(0x1000, &[3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0]);
    let l = h.call("PPB_MessageLoop;1.0", "Create", &[INSTANCE]);
    assert_eq!(
        h.call(M, "RegisterMessageHandler", &[INSTANCE + 1, 0, 0x1000, l]),
        pp_error::BADARGUMENT
    );
    assert_eq!(
        h.call(M, "RegisterMessageHandler", &[INSTANCE, 0, 0, l]),
        pp_error::BADARGUMENT
    );
    assert_eq!(
        h.call(M, "RegisterMessageHandler", &[INSTANCE, 0, 0x1000, 0x999]),
        pp_error::BADRESOURCE
    );
    // A loop on no thread yet cannot be run by anyone else.
    assert_eq!(
        h.call(M, "RegisterMessageHandler", &[INSTANCE, 0, 0x1000, l]),
        pp_error::WRONG_THREAD
    );
    // Unregistering when none is registered has no effect.
    h.call(M, "UnregisterMessageHandler", &[INSTANCE]);
}
