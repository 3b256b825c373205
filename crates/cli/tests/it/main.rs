//! Integration tests of the `pexe2wasm` command line, in one binary so the workspace links fewer test
//! executables. Each module was a test file of its own; shared helpers are in
//! `pexe2wasm_testkit`.

/// Two tests of one scenario: `$f(Browser::Chromium)` and `$f(Browser::Firefox)`.
macro_rules! both_browsers {
    ($f:ident: $chromium:ident, $firefox:ident) => {
        #[test]
        fn $chromium() {
            $f(Browser::Chromium);
        }

        #[test]
        fn $firefox() {
            $f(Browser::Firefox);
        }
    };
}

mod cli_batch;
mod cli_info;
mod cli_interp;
mod cli_manners;
mod cli_nexe;
mod cli_status;
mod cmd;
mod conformance;
mod dockerfile;
mod dropin_sites;
mod extension;
mod host;
mod malformed;
mod npm;
mod pepper_end;
mod pepper_gfx;
mod pepper_messages;
mod pepper_real;
mod pepper_url;
mod pepper_ws;
mod run_cli;
mod run_stdio;
mod sites;
mod stdout_buffer;
mod web;
mod web_nexe;
