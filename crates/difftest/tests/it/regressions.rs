//! Fuzz inputs that once found a difference (`regressions/`, docs/FUZZING.md).
use pexe2wasm_difftest::{check, Config};

#[test]
fn fuzz_regressions_agree() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/regressions");
    let cfg = Config::default();
    for e in std::fs::read_dir(&dir).expect("regressions directory") {
        let path = e.expect("entry").path();
        if path.extension().is_some_and(|x| x == "md") {
            continue;
        }
        let data = std::fs::read(&path).expect("read input");
        if let Err(f) = check(&data, &cfg) {
            panic!("{}: {f}", path.display());
        }
    }
}
