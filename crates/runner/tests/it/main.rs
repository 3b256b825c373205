//! Integration tests of the runner (converted modules under wasmtime), in one binary so the workspace links fewer test
//! executables. Each module was a test file of its own; shared helpers are in
//! `pexe2wasm_testkit`.

/// The functions of the Pepper runtime's host interface (`runtime::PEPPER_HOST`) a
/// plugin imports.
const PEPPER_HOST_FUNCTIONS: [&str; 7] = [
    "start",
    "get_interface",
    "register_thread_creator",
    "fill",
    "done",
    "wait",
    "host_thread",
];

mod convert_real;
mod convert_run;
mod convert_threads;
mod cpu_count;
mod fixtures_run;
mod hosts;
mod pepper_files;
mod pepper_gfx;
mod pepper_gfx_events;
mod pepper_gfx_input;
mod pepper_host;
mod pepper_json;
mod pepper_net;
mod pepper_ppb;
mod pepper_support;
mod pepper_url;
mod pepper_var;
mod run_wasm;
mod runtime_irt;
mod stdio_fast;
