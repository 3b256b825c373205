//! The browser Pepper host (web/src: the `<embed>` replacement, the instance, thread and
//! IO workers, the PPB families), embedded so that `pexe2wasm web` can write it into a
//! folder and the service can serve it to its upload page's Run button. One list, so the
//! two never serve different hosts.

/// (path under web/src, contents) for each file named.
macro_rules! host_files {
    ($($f:literal),* $(,)?) => {
        &[$(($f, include_str!(concat!("../../../web/src/", $f)))),*]
    };
}

/// The browser host's files, as served from DIR/pexe2wasm/ (web/src in the repository).
/// `web_writes_a_folder_with_the_module_the_host_and_a_page` (crates/cli tests) checks
/// this list against web/src.
pub const HOST_FILES: &[(&str, &str)] = host_files![
    "advertise.js",
    "embed.js",
    "ime.js",
    "isolation.js",
    "audio-worklet.js",
    "page-services.js",
    "player.js",
    "workers.js",
    "chrome/alarms.js",
    "chrome/apis.js",
    "chrome/base.js",
    "chrome/events.js",
    "chrome/filesystem.js",
    "chrome/host.js",
    "chrome/i18n.js",
    "chrome/launcher.js",
    "chrome/misc.js",
    "chrome/missing-files.js",
    "chrome/notifications.js",
    "chrome/runtime.js",
    "chrome/storage.js",
    "chrome/system.js",
    "chrome/tabs.js",
    "chrome/windows.js",
    "convert/converter.js",
    "drop-in.js",
    "compat/filesystem.js",
    "compat/filesystem-worker.js",
    "compat/kv-directory.js",
    "compat/sandbox-layout.js",
    "host/clock.js",
    "host/command-worker.js",
    "host/context.js",
    "host/contract.js",
    "host/heap.js",
    "host/in-order.js",
    "host/instance-worker.js",
    "host/io-worker.js",
    "host/io/loader.js",
    "host/io/sandbox-fs.js",
    "host/io/urlmap.js",
    "host/io/websocket.js",
    "host/mem.js",
    "host/parent.js",
    "host/posted.js",
    "host/ppp.js",
    "host/protocol.js",
    "host/registry.js",
    "host/resources.js",
    "host/shared.js",
    "host/thread-worker.js",
    "host/threads.js",
    "host/vars.js",
    "host/wasi.js",
    "host/wasm-info.js",
    "host/ppb/audio.js",
    "host/ppb/core.js",
    "host/ppb/files.js",
    "host/ppb/graphics.js",
    "host/ppb/gl/common.js",
    "host/ppb/gl/extensions.js",
    "host/ppb/gl/gles2.js",
    "host/ppb/gl/graphics3d.js",
    "host/ppb/gl/index.js",
    "host/ppb/input.js",
    "host/ppb/message_loop.js",
    "host/ppb/messaging.js",
    "host/ppb/net.js",
    "host/ppb/page.js",
    "host/ppb/text_input.js",
    "host/ppb/touch_ime.js",
    "host/ppb/var.js",
    "host/ppb/url.js",
    "host/ppb/video.js",
    "host/ppb/view.js",
    "host/ppb/websocket.js",
];

/// The file at `path` (as under web/src), if it is part of the host.
pub fn file(path: &str) -> Option<&'static str> {
    HOST_FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
}

/// The drop-in script, pexe2wasm.js: advertise.js (the mimeTypes answer, before the page's
/// own scripts) followed by drop-in.js (which loads pexe2wasm/embed.js beside it), one
/// classic script (docs/DROP-IN.md).
pub fn drop_in_script() -> String {
    let part = |f| file(f).expect("a host file");
    format!(
        "// pexe2wasm.js: written by `pexe2wasm host` from web/src/advertise.js and web/src/drop-in.js.\n{}\n{}",
        part("advertise.js"),
        part("drop-in.js")
    )
}

/// The npm package's own files (web/npm), written by `pexe2wasm host --npm` beside the host
/// folder's (docs/NPM.md): the ES module entry, its type declarations, its README.
pub const NPM_FILES: &[(&str, &str)] = &[
    ("index.js", include_str!("../../../web/npm/index.js")),
    ("index.d.ts", include_str!("../../../web/npm/index.d.ts")),
    ("README.md", include_str!("../../../web/npm/README.md")),
];
/// (path under web/extension, contents) for each file named.
macro_rules! extension_files {
    ($($f:literal),* $(,)?) => {
        &[$(($f, include_str!(concat!("../../../web/extension/", $f)))),*]
    };
}

/// The browser extension's own files (web/extension), beside the host's in the folder
/// `pexe2wasm extension` writes (docs/EXTENSION.md). manifest.json is Chromium's; the
/// Firefox variant is derived from it by the CLI.
pub const EXTENSION_FILES: &[(&str, &str)] = extension_files![
    "manifest.json",
    "background.js",
    "content.js",
    "main.js",
    "options.html",
    "options.js",
    "player.js",
];

/// The console page `pexe2wasm web` writes for a bare pexe (web/templates/app.html), with
/// its placeholders ({{TITLE}}, {{NMF}}, {{WIDTH}}, {{HEIGHT}}).
pub const APP_PAGE: &str = include_str!("../../../web/templates/app.html");

/// The host's scripts in [`APP_PAGE`]: advertise.js, then embed.js as a (deferred) module.
/// The extension's player page keeps them (its player.js runs between the two).
pub const APP_PAGE_HOST_SCRIPTS: &str = "<script src=\"pexe2wasm/advertise.js\"></script>\n<script type=\"module\" src=\"pexe2wasm/embed.js\"></script>";

/// [`APP_PAGE`] starting the host as every page of `web` and `host` does: with the drop-in
/// script, pexe2wasm.js, for the host's scripts.
pub fn app_page_with_drop_in() -> String {
    // The template is ours: a change that drops these lines fails the web and host tests
    // (no pexe2wasm.js in the page).
    debug_assert!(APP_PAGE.contains(APP_PAGE_HOST_SCRIPTS));
    APP_PAGE.replace(
        APP_PAGE_HOST_SCRIPTS,
        "<script src=\"pexe2wasm.js\"></script>",
    )
}
