//! The real corpus and scratch directories for integration tests: where the real-pexe corpus lives and how a test
//! behaves when it is missing (a failure under CI, a loud skip elsewhere).

use std::path::{Path, PathBuf};

/// `$var`, else `../shared/fixtures/NAME` beside the repository.
fn corpus_dir(var: &str, name: &str) -> PathBuf {
    match std::env::var(var) {
        Ok(p) => PathBuf::from(p),
        Err(_) => crate::repo_root().join("../shared/fixtures").join(name),
    }
}

/// What a test does when corpus file `what` at `path` is missing (`err`: why it could not
/// be read): `None` after a SKIPPED line naming the variable `var`, a panic under CI.
fn absent<T>(what: &str, path: &Path, err: Option<&std::io::Error>, var: &str) -> Option<T> {
    let (after_ci, after_found) = match err {
        Some(e) => (format!(": {e}"), format!(" ({e})")),
        None => (String::new(), String::new()),
    };
    if std::env::var("CI").map(|v| v == "true").unwrap_or(false) {
        panic!("{what} {} is missing under CI{after_ci}", path.display());
    }
    eprintln!(
        "SKIPPED: {what} {} not found{after_found}; set {var}",
        path.display()
    );
    None
}

/// Directory of the real pexes: `$PEXE2WASM_REAL_CORPUS`, else `../shared/fixtures/real`
/// relative to the repository root.
pub fn real_corpus_dir() -> PathBuf {
    corpus_dir("PEXE2WASM_REAL_CORPUS", "real")
}

/// Directory of the real sites, Chrome apps and extension (`SOURCES.md` there):
/// `$PEXE2WASM_SITES_CORPUS`, else `../shared/fixtures/sites` beside the repository.
pub fn sites_dir() -> PathBuf {
    corpus_dir("PEXE2WASM_SITES_CORPUS", "sites")
}

/// The folder of one real site, or `None` (after a clear SKIPPED line) when the corpus is
/// absent outside CI; a panic when it is absent under CI (`CI=true`).
pub fn real_site(name: &str) -> Option<PathBuf> {
    let path = sites_dir().join(name);
    if path.is_dir() {
        return Some(path);
    }
    absent("real site", &path, None, "PEXE2WASM_SITES_CORPUS")
}

/// Reads one real pexe. Returns `None` (after printing a clear SKIPPED line) when the corpus
/// is absent outside CI; panics when it is absent under CI (`CI=true`).
pub fn real_pexe(name: &str) -> Option<Vec<u8>> {
    let path = real_corpus_dir().join(name);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => absent("real corpus file", &path, Some(&e), "PEXE2WASM_REAL_CORPUS"),
    }
}

/// The real pexes of `names` that are present, read, with their names; a missing one is
/// passed over as [`real_pexe`] says (a SKIPPED line, a panic under CI).
pub fn real_pexes<'a>(names: &'a [&'a str]) -> impl Iterator<Item = (&'a str, Vec<u8>)> + 'a {
    names
        .iter()
        .filter_map(|&name| real_pexe(name).map(|data| (name, data)))
}

/// Directory of the real nexes (`SOURCES.md` there): `$PEXE2WASM_NEXE_CORPUS`, else
/// `../shared/fixtures/nexe` beside the repository.
pub fn nexe_corpus_dir() -> PathBuf {
    corpus_dir("PEXE2WASM_NEXE_CORPUS", "nexe")
}

/// Reads one real nexe (a path relative to the nexe corpus). Returns `None` (after a clear
/// SKIPPED line) when the corpus is absent outside CI; panics when it is absent under CI
/// (`CI=true`).
pub fn real_nexe(name: &str) -> Option<Vec<u8>> {
    let path = nexe_corpus_dir().join(name);
    match std::fs::read(&path) {
        Ok(b) => Some(b),
        Err(e) => absent("real nexe", &path, Some(&e), "PEXE2WASM_NEXE_CORPUS"),
    }
}

/// The 20 real nexes of `../shared/fixtures/nexe` (SOURCES.md there).
pub const NEXES: &[&str] = &[
    "ckauth-arm.nexe",
    "ckauth-x86_64.nexe",
    "fftw-wisdom-x86_32.nexe",
    "fftw-wisdom-x86_64.nexe",
    "glibc-sln-x86_64.nexe",
    "irt_core-x86_64.nexe",
    "logrun-base64-x86_64.nexe",
    "logrun-fact-x86_64.nexe",
    "nacl-fib_array-srpc-x86_64.nexe",
    "nacl-hello_world-arm.nexe",
    "nacl-hello_world-x86_64.nexe",
    "nacl-mounts-AppEngineTest-x86_32.nexe",
    "nacl-nullptr-x86_64.nexe",
    "nacl-text_overlaps_data-x86_32.nexe",
    "naclports-gallery-sine_synth-x86_64.nexe",
    "nassh-ssh_client-arm.nexe",
    "nassh-ssh_client-x86_32.nexe",
    "nassh-ssh_client-x86_64.nexe",
    "pnacl-ld-x86_64.nexe",
    "pnacl-sz-x86_64.nexe",
];

/// The well-formed real pexes that cannot run: no `void _start(i32)`.
#[allow(dead_code)]
pub const NOT_RUNNABLE: &[&str] = &["binji-bitcast.pexe", "pnacl-llvm-array-of-lit.pexe"];

/// Calls the macro `$m` with the 30 well-formed real pexes (every file except the
/// binji-regress-* ones) as rows `test_name => "file.pexe",`: the one list behind
/// [`WELL_FORMED`] and behind the tests that test files one by one.
#[macro_export]
macro_rules! well_formed_pexes {
    ($m:ident) => {
        $crate::well_formed_pexes!([$m] ());
    };
    // `[path of the macro] (tokens it gets before the rows)`.
    ([$($m:tt)+] ($($before:tt)*)) => {
        $($m)+! {
            $($before)*
            astar_star => "astar-star.pexe",
            binji_binarytrees => "binji-binarytrees.pexe",
            binji_bitcast => "binji-bitcast.pexe",
            binji_dedupe_incoming => "binji-dedupe_incoming.pexe",
            binji_fannkuchredux => "binji-fannkuchredux.pexe",
            binji_fasta => "binji-fasta.pexe",
            binji_main => "binji-main.pexe",
            binji_mandelbrot => "binji-mandelbrot.pexe",
            binji_meteor => "binji-meteor.pexe",
            binji_nbody => "binji-nbody.pexe",
            binji_printf => "binji-printf.pexe",
            binji_puts => "binji-puts.pexe",
            binji_sem => "binji-sem.pexe",
            binji_setjmp => "binji-setjmp.pexe",
            binji_spectralnorm => "binji-spectralnorm.pexe",
            binji_start => "binji-start.pexe",
            binji_thread => "binji-thread.pexe",
            bp2008_pnacl_player => "bp2008-pnacl_player.pexe",
            cptaffe_hello_tutorial => "cptaffe-hello_tutorial.pexe",
            ds923y_compress => "ds923y-compress.pexe",
            ds923y_decompress => "ds923y-decompress.pexe",
            glbench27 => "glbench27.pexe",
            lpdevs_part2 => "lpdevs-part2.pexe",
            optionsplayers_hello_tutorial => "optionsplayers-hello_tutorial.pexe",
            path_tracer => "path-tracer.pexe",
            pnacl_llvm_array_of_lit => "pnacl-llvm-array-of-lit.pexe",
            shhnjk_url_loader => "shhnjk-url_loader.pexe",
            stockfish_170317 => "stockfish-170317.pexe",
            supernet_iguana => "supernet-iguana.pexe",
            webpenc => "webpenc.pexe",
        }
    };
}

/// One `#[test]` per well-formed real pexe, named as in [`well_formed_pexes`], that calls
/// `$check("file.pexe")`.
#[macro_export]
macro_rules! test_each_well_formed_pexe {
    ($check:ident) => {
        $crate::well_formed_pexes!([$crate::test_each_row]($check));
    };
}

/// A row of [`test_each_well_formed_pexe`]: one test.
#[doc(hidden)]
#[macro_export]
macro_rules! test_each_row {
    ($check:ident $($test:ident => $file:literal,)*) => {
        $(
            #[test]
            fn $test() {
                $check($file);
            }
        )*
    };
}

macro_rules! well_formed_const {
    ($($test:ident => $file:literal,)*) => {
        /// The 30 well-formed real pexes (every file except the binji-regress-* ones).
        pub const WELL_FORMED: &[&str] = &[$($file),*];
    };
}

well_formed_pexes!(well_formed_const);

/// The fuzzer-found malformed pexes from pnacl.c's regression suite.
pub const MALFORMED: &[&str] = &[
    "binji-regress-1-malformed.pexe",
    "binji-regress-2-malformed.pexe",
    "binji-regress-3-malformed.pexe",
    "binji-regress-4-malformed.pexe",
    "binji-regress-5-malformed.pexe",
    "binji-regress-6-malformed.pexe",
];

/// A fresh scratch directory under the system temp dir (unique per process and call),
/// removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "pexe2wasm-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }
    /// The directory itself.
    pub fn dir(&self) -> &std::path::Path {
        &self.0
    }
    pub fn join(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
    /// `join(rel)` as a command-line argument.
    pub fn arg(&self, rel: &str) -> String {
        self.join(rel).to_string_lossy().into_owned()
    }
    /// Writes `bytes` at `rel`, creating directories.
    pub fn put(&self, rel: &str, bytes: &[u8]) {
        let p = self.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    /// Names of the directory's entries (unordered).
    pub fn entries(&self) -> Vec<String> {
        std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
