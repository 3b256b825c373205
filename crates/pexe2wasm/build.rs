//! Compiles the built-in WebAssembly modules from their WAT sources when the crate is
//! built: the runtime (its three variants) and the fmod helpers. Compiling them at run time
//! cost every `pexe2wasm` process about 13M instructions before its first conversion.
//! The sources stay the single truth (`IRT_WAT`, `FMOD_WAT`); tests compile them at run
//! time too and compare.

#[path = "src/runtime/variant.rs"]
mod variant;

use std::path::Path;

fn compile(src: &str, what: &str, out: &Path) {
    let wasm = wat::parse_str(src).unwrap_or_else(|e| panic!("{what}: {e}"));
    std::fs::write(out, wasm).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}

fn main() {
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let out = Path::new(&out);
    for f in [
        "src/runtime/irt.wat",
        "src/runtime/variant.rs",
        "src/emit/fmod.wat",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
    let irt = std::fs::read_to_string("src/runtime/irt.wat").expect("src/runtime/irt.wat");
    compile(&irt, "src/runtime/irt.wat", &out.join("irt.wasm"));
    compile(
        &variant::threaded(&irt),
        "src/runtime/irt.wat (threaded variant)",
        &out.join("irt_threads.wasm"),
    );
    compile(
        &variant::pepper(&irt),
        "src/runtime/irt.wat (Pepper variant)",
        &out.join("irt_pepper.wasm"),
    );
    let fmod = std::fs::read_to_string("src/emit/fmod.wat").expect("src/emit/fmod.wat");
    compile(&fmod, "src/emit/fmod.wat", &out.join("fmod.wasm"));
}
