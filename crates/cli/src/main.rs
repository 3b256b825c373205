//! The `pexe2wasm` command line: `dis`, `asm`, `info`, `verify`, `convert`, `run` and
//! `batch`.
//!
//! Manners: every error is one line on stderr, `error: FILE: MESSAGE`; exit code 0 on
//! success, 1 for bad input or a failed operation, 2 for usage errors; `-` reads stdin or
//! writes stdout; output goes through a `BufWriter`; a closed pipe (`| head`) ends quietly.
//! `run` exits with the program's status instead; a trap prints its one-line error, then
//! the wasm backtrace, and exits 134 (as an abort would); a Pepper plugin runs under the
//! command-line Pepper host (`pepper.rs`), its messages on stdin and stdout; a plugin
//! converted without the Pepper runtime exits 69 after one line saying so. `batch` exits 1
//! when any file failed (each failure one `error:` line), after converting all the others.

mod batch;
mod commands;
mod extension;
mod host;
mod interp;
mod pepper;
mod serve;
mod web;

use anyhow::{anyhow, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Parser)]
#[command(
    name = "pexe2wasm",
    version,
    about = "Read, write and check PNaCl executables (.pexe) on the way to WebAssembly",
    after_help = "FILE may be '-' for standard input; '-o -' writes to standard output.\n\
                  Exit status: 0 success, 1 bad input or failed operation, 2 usage error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the largest variant (`run` with its Pepper flags)
// costs nothing worth a Box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Disassemble a pexe into PNaClAsm text (bit positions, records, assembly).
    Dis {
        /// The pexe to read ('-' for stdin).
        file: PathBuf,
        /// Where to write the text (default: stdout).
        #[arg(short, long, value_name = "OUT")]
        output: Option<PathBuf>,
    },
    /// Assemble PNaClAsm text (as printed by `dis`) back into a pexe.
    Asm {
        /// The text to read ('-' for stdin).
        file: PathBuf,
        /// Where to write the pexe ('-' for stdout).
        #[arg(short, long, value_name = "OUT.pexe")]
        output: PathBuf,
    },
    /// Summarize a pexe: sizes, counts, functions, intrinsics, IRT/PPAPI interfaces.
    Info {
        /// The pexe to read ('-' for stdin).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run one function of a pexe in the reference interpreter (no conversion): its
    /// result, and with --trace every instruction's value (a debugging aid for a function
    /// that misbehaves once converted; docs/FUZZING.md).
    Interp {
        /// The pexe to read ('-' for stdin).
        file: PathBuf,
        /// The function: its name, or its id as @fN.
        function: String,
        /// Its arguments, one per parameter: integers (decimal, or hex with 0x), floats,
        /// vectors as comma-separated lanes (put `--` before a negative one).
        args: Vec<String>,
        /// Print each executed instruction and its value on stderr.
        #[arg(long)]
        trace: bool,
        /// After the call, print the bytes of these globals (@gN) in hex.
        #[arg(long = "dump", value_name = "@gN")]
        dump: Vec<String>,
        /// Instructions to run at most.
        #[arg(long, default_value_t = 10_000_000)]
        max_steps: u64,
    },
    /// Decode a pexe, check it against the PNaCl ABI and check that it can run (`_start`)
    /// and converts.
    Verify {
        /// The pexe to read ('-' for stdin).
        file: PathBuf,
        /// Only check the ABI; accept a module without `_start` (a library or a test input).
        #[arg(long)]
        no_runnable: bool,
    },
    /// Convert a pexe to a WebAssembly module (a WASI preview 1 command).
    ///
    /// A note on stderr says when the module needs more than a WASI runtime: a threaded
    /// module needs `pexe2wasm run`; a Pepper (PPAPI) plugin needs a Pepper host.
    Convert {
        /// The pexe to read ('-' for stdin).
        file: PathBuf,
        /// Where to write the module ('-' for stdout).
        #[arg(short, long, value_name = "OUT.wasm")]
        output: PathBuf,
        /// Write the WebAssembly text format instead of the binary.
        #[arg(long)]
        wat: bool,
        /// Threads: auto (when the pexe queries nacl-irt-thread-0.1), on or off.
        #[arg(long, value_enum, default_value_t = ThreadsArg::Auto)]
        threads: ThreadsArg,
        /// Smaller code: values whose lives never meet share wasm locals (liveness across
        /// blocks). The code section is 7-14% smaller; conversion takes 13-15% longer.
        #[arg(long)]
        small_code: bool,
    },
    /// Convert a pexe in memory and run it under wasmtime with WASI (a .wasm file runs as is).
    ///
    /// The program sees argv[0] = FILE, then ARGS; no environment and no host files unless
    /// given with --env and --dir. Its exit status becomes ours; a trap exits 134. A Pepper
    /// (PPAPI) plugin runs as one instance: each line of standard input is a message to
    /// it, each message it posts is a line of standard output, its console and own output
    /// go to standard error; it ends once input has ended and it can make no further
    /// progress (docs/PEPPER-CLI.md). Use '--' before program arguments that start with '-'.
    Run {
        /// The pexe (or converted .wasm) to run.
        file: PathBuf,
        /// Arguments for the program.
        args: Vec<String>,
        /// Set an environment variable of the program (repeatable).
        #[arg(long = "env", value_name = "K=V")]
        env: Vec<String>,
        /// Let the program use a host directory, seen at GUEST (default: HOST as given;
        /// a relative GUEST is relative to "/"); `:ro` at the end makes it read-only
        /// (repeatable).
        #[arg(long = "dir", value_name = "HOST[::GUEST][:ro]")]
        dirs: Vec<String>,
        /// PNaCl's linker (pnacl-ld nexe) only: the folder of its resources (crtbegin.o,
        /// libgcc.a, libpnacl_irt_shim.a, … or Chrome's pnacl_public_x86_64_* names);
        /// ARGS are then the objects to link, and the nexe goes to stdout.
        #[arg(long, value_name = "DIR")]
        resources: Option<PathBuf>,
        /// Most threads the program may have at once, its main thread included (default
        /// 512); one more pthread_create fails with EAGAIN.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        max_threads: Option<u32>,
        /// Threads when converting: auto (when the pexe queries nacl-irt-thread-0.1), on or
        /// off.
        #[arg(long, value_enum, default_value_t = ThreadsArg::Auto)]
        threads: ThreadsArg,
        /// Pepper plugin: an attribute of its <embed>, passed to DidCreate after src and
        /// type (repeatable).
        #[arg(long = "attr", value_name = "NAME=VALUE")]
        attrs: Vec<String>,
        /// Pepper plugin: the size of its view (default 300x150, an <embed>'s own).
        #[arg(long, value_name = "WxH")]
        size: Option<String>,
        /// Pepper plugin: how messages travel on stdin/stdout: text (a line is a string;
        /// anything but a string comes out as JSON) or json (JSON Lines both ways).
        #[arg(long, value_enum, default_value_t = MessagesArg::Text)]
        messages: MessagesArg,
        /// Pepper plugin: end the instance at most SECS after standard input ended (by
        /// default it ends once the app can make no further progress). Other programs:
        /// stop them after SECS.
        #[arg(long, value_name = "SECS")]
        timeout: Option<f64>,
        /// Pepper plugin: write every frame it draws with Graphics2D as a PNG into DIR.
        #[arg(long, value_name = "DIR")]
        frames: Option<PathBuf>,
        /// Pepper plugin: replay the input events in FILE (JSON Lines, see
        /// docs/PEPPER-CLI.md).
        #[arg(long, value_name = "FILE")]
        events: Option<PathBuf>,
        /// Pepper plugin: resolve relative URLs against DIR (served as files) or a loopback
        /// http:// origin.
        #[arg(long, value_name = "DIR|URL")]
        origin: Option<String>,
        /// Pepper plugin: load absolute URLs (http, https, ws) that start with FROM from TO,
        /// a loopback URL, instead (repeatable).
        #[arg(long = "url-map", value_name = "FROM=TO")]
        url_map: Vec<String>,
        /// Pepper plugin: keep its persistent and temporary file systems under DIR (by
        /// default a temporary directory removed at exit).
        #[arg(long, value_name = "DIR")]
        storage: Option<PathBuf>,
        /// Pepper plugin: allow sockets, name resolution and WebSockets to loopback
        /// addresses (the only value is `loopback`; without it they get PP_ERROR_NOACCESS).
        #[arg(long, value_name = "loopback", value_parser = ["loopback"])]
        net: Option<String>,
    },
    /// Convert every pexe under DIR, and those its .nmf manifests name, into OUTDIR.
    ///
    /// OUTDIR mirrors DIR (DIR/a/b.pexe becomes OUTDIR/a/b.wasm) and receives report.json
    /// and report.md. A file that fails is reported and leaves no .wasm; the others still
    /// convert. Exit status 0 when every file converted, 1 when any failed.
    Batch {
        /// The directory to convert (searched recursively).
        dir: PathBuf,
        /// The output directory (created if needed; may not be DIR or contain it).
        #[arg(short, long, value_name = "OUTDIR")]
        output: PathBuf,
        /// Worker threads (default: one per core).
        #[arg(short = 'j', long = "jobs", value_name = "N",
              value_parser = clap::value_parser!(u16).range(1..))]
        jobs: Option<u16>,
        /// No progress bar and no summary line (errors are still printed).
        #[arg(short, long)]
        quiet: bool,
        /// Smaller code, as `convert --small-code`.
        #[arg(long)]
        small_code: bool,
        /// One site per app instead (each folder, Chrome package, .crx and .zip under
        /// DIR, as `web` makes it) and a gallery: OUTDIR/index.html and gallery.json.
        /// Resumable: an app whose input did not change is skipped.
        #[arg(long)]
        site: bool,
    },
    /// Write a static site that runs archived NaCl content in today's browsers.
    ///
    /// A folder, .crx, .zip, manifest.json or page: every file kept at its path, a module
    /// beside each pexe, the drop-in script (pexe2wasm.js, preconverted) in every page, and a launcher for a Chrome app
    /// or extension (docs/SITES.md). A pexe or .nmf: the module, the manifest and a page;
    /// without --page a generated one (the app, a console to send and see its messages,
    /// its canvas), with --page the app's own page and its folder's tree. Serve the folder with
    /// `pexe2wasm serve`, or from any static host that sets the cross-origin isolation
    /// headers (docs/JS-HOST.md).
    Web {
        /// What to revive: a folder (a site's tree, a Chrome app or extension), a .crx or
        /// .zip package, a Chrome app's manifest.json, a page (.html: its folder's whole
        /// tree), or one plugin: a pexe, or the .nmf manifest that names it.
        file: PathBuf,
        /// The folder to write (created if needed; files of the same names are replaced).
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// The app's own page, kept with the replacement script added.
        #[arg(long, value_name = "PAGE.html")]
        page: Option<PathBuf>,
        /// The size of the app in the generated page (default 640x480).
        #[arg(long, value_name = "WxH")]
        size: Option<String>,
        /// Fetch URLs that start with FROM from TO instead (URLLoader, WebSocket): for an
        /// app's hard-coded servers that are gone or must stay local. Repeatable; the
        /// longest FROM wins. Written into the page.
        #[arg(long = "url-map", value_name = "FROM=TO")]
        url_map: Vec<String>,
        /// URL loads of another origin than the page's go only through --url-map; any
        /// other is refused (PP_ERROR_NOACCESS), even when the app allows cross-origin
        /// requests. For apps that must not reach the network (untrusted ones, tests).
        #[arg(long)]
        refuse_unmapped: bool,
        /// Smaller code, as `convert --small-code` (a smaller download for the page).
        #[arg(long)]
        small_code: bool,
    },
    /// Write the drop-in host folder: with `<script src="DIR/pexe2wasm.js"></script>` added
    /// to a page, its NaCl embeds run, their pexes converted in the browser (and cached).
    ///
    /// DIR holds pexe2wasm.js, the browser host (pexe2wasm/), the converter for the
    /// browser, the isolation helper and player.html (?src=URL: a pexe or manifest of the
    /// site on a console page); a page sets `window.pexe2wasmConfig` before the
    /// script for what `web`'s flags set (docs/DROP-IN.md). DIR must be new, empty, or a
    /// host folder written before.
    Host {
        /// The folder to write.
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// Write it as an npm package: with package.json, the ES module entry index.js
        /// (`load(element|url, options)`), its type declarations and a README
        /// (docs/NPM.md); `npm pack` in DIR packs it.
        #[arg(long)]
        npm: bool,
    },
    /// Write the browser extension, unpacked: on any page, NaCl embeds run (their pexes
    /// converted in the browser), with no change to the page; direct links to a .pexe or
    /// .nmf open a player (docs/EXTENSION.md).
    ///
    /// Chromium's (MV3) by default: load it at chrome://extensions ("Load unpacked").
    /// DIR must be new, empty, or an extension folder written before.
    Extension {
        /// The folder to write.
        #[arg(short, long, value_name = "DIR")]
        output: PathBuf,
        /// Firefox's variant (background scripts, browser_specific_settings.gecko.id): load
        /// it at about:debugging ("Load Temporary Add-on", its manifest.json).
        #[arg(long)]
        firefox: bool,
    },
    /// Serve a folder written by `pexe2wasm web` over HTTP, with the headers a converted
    /// app needs (cross-origin isolation, WebAssembly's MIME type). A development server.
    Serve {
        /// The folder to serve.
        dir: PathBuf,
        /// The address to listen on (port 0: any free port; the URL is printed).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
        listen: std::net::SocketAddr,
    },
}

/// `--messages`: how a Pepper plugin's messages are written and read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MessagesArg {
    Text,
    Json,
}

/// `--threads`: whether the output uses wasm threads (`convert::Threads`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ThreadsArg {
    Auto,
    On,
    Off,
}

impl From<ThreadsArg> for pexe2wasm::convert::Threads {
    fn from(t: ThreadsArg) -> Self {
        match t {
            ThreadsArg::Auto => Self::Auto,
            ThreadsArg::On => Self::On,
            ThreadsArg::Off => Self::Off,
        }
    }
}

/// Adapters to the library stages. Each wraps one library call, so wiring a new or changed
/// stage API is a one-line change here.
mod stages {
    use anyhow::Result;
    use pexe2wasm::ir::Module;
    use pexe2wasm::verify::Finding;
    use std::io::Write;

    /// `pexe2wasm::text::dis::disassemble`.
    pub fn disassemble(data: &[u8], out: &mut dyn Write) -> Result<()> {
        Ok(pexe2wasm::text::dis::disassemble(data, out)?)
    }

    /// `pexe2wasm::text::asm::assemble`.
    pub fn assemble(text: &str) -> Result<Vec<u8>> {
        Ok(pexe2wasm::text::asm::assemble(text)?)
    }

    /// `pexe2wasm::verify::verify`: the PNaCl ABI findings.
    pub fn verify(module: &Module) -> Vec<Finding> {
        pexe2wasm::verify::verify(module)
    }

    /// `pexe2wasm::verify::check_runnable`: why the module cannot run, if it cannot.
    pub fn check_runnable(module: &Module) -> Option<Finding> {
        pexe2wasm::verify::check_runnable(module).err()
    }

    /// `pexe2wasm::convert::convert_module` with the default options but `threads` and
    /// `locals` (the output is that of `convert::convert`), and what the output needs to
    /// run (`pexe2wasm::needs`, adjusted for the threads choice), from one decode.
    pub fn convert_with_needs(
        data: &[u8],
        threads: pexe2wasm::convert::Threads,
        locals: pexe2wasm::convert::Locals,
    ) -> Result<(Vec<u8>, pexe2wasm::needs::Needs)> {
        use pexe2wasm::convert::{convert_module, ConvertError, ConvertOptions};
        let module = pexe2wasm::decode::decode(data).map_err(ConvertError::Decode)?;
        let needs = pexe2wasm::needs::needs_of_module(&module);
        let opts = ConvertOptions {
            threads,
            locals,
            ..Default::default()
        };
        let c = convert_module(module, data.len(), &opts)?;
        Ok((c.wasm, needs.for_output(c.features.threads)))
    }

    /// `wasmprinter::print_bytes`: the text format of a module.
    pub fn print_wat(wasm: &[u8]) -> Result<String> {
        wasmprinter::print_bytes(wasm)
    }

    /// `pexe2wasm_runner::run_wasm`.
    pub fn run_wasm(
        wasm: &[u8],
        opts: &pexe2wasm_runner::RunOptions,
    ) -> std::result::Result<pexe2wasm_runner::RunOutcome, pexe2wasm_runner::RunError> {
        pexe2wasm_runner::run_wasm(wasm, opts)
    }
}

/// Set once a write failed because the reader went away (`| head`).
static BROKEN_PIPE: AtomicBool = AtomicBool::new(false);

/// A writer that notes a broken pipe, whatever error type later wraps the `io::Error`.
struct PipeWatch<W>(W);

impl<W: Write> PipeWatch<W> {
    fn note<T>(r: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &r {
            if e.kind() == io::ErrorKind::BrokenPipe {
                BROKEN_PIPE.store(true, Ordering::Relaxed);
            }
        }
        r
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Self::note(self.0.write(buf))
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        Self::note(self.0.write_all(buf))
    }
    fn flush(&mut self) -> io::Result<()> {
        Self::note(self.0.flush())
    }
}

/// Where a command writes: stdout, or a file that appears only when the command succeeds
/// (written to a temporary name beside it, renamed on [`Output::commit`]).
enum Output {
    Stdout(io::BufWriter<PipeWatch<io::Stdout>>),
    File {
        w: io::BufWriter<PipeWatch<fs::File>>,
        tmp: PathBuf,
        dest: PathBuf,
    },
}

impl Output {
    fn open(path: Option<&Path>) -> Result<Output> {
        match path {
            None => Ok(Self::stdout()),
            Some(p) if p.as_os_str() == "-" => Ok(Self::stdout()),
            Some(p) => {
                let name = p
                    .file_name()
                    .ok_or_else(|| anyhow!("{}: not a file name", p.display()))?;
                let mut tmp_name = std::ffi::OsString::from(".");
                tmp_name.push(name);
                tmp_name.push(format!(".tmp{}", std::process::id()));
                let tmp = p.with_file_name(tmp_name);
                let f = fs::File::create(&tmp)
                    .with_context(|| format!("{}: cannot create", p.display()))?;
                Ok(Output::File {
                    w: io::BufWriter::with_capacity(1 << 16, PipeWatch(f)),
                    tmp,
                    dest: p.to_path_buf(),
                })
            }
        }
    }

    fn stdout() -> Output {
        Output::Stdout(io::BufWriter::with_capacity(
            1 << 16,
            PipeWatch(io::stdout()),
        ))
    }

    fn writer(&mut self) -> &mut dyn Write {
        match self {
            Output::Stdout(w) => w,
            Output::File { w, .. } => w,
        }
    }

    /// Flushes and, for a file, moves it into place.
    fn commit(mut self) -> Result<()> {
        self.writer().flush().context("cannot write the output")?;
        if let Output::File { tmp, dest, .. } = &self {
            fs::rename(tmp, dest).with_context(|| format!("{}: cannot write", dest.display()))?;
        }
        // Nothing left for Drop to clean up.
        if let Output::File { tmp, .. } = &mut self {
            *tmp = PathBuf::new();
        }
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Output::File { tmp, .. } = self {
            if !tmp.as_os_str().is_empty() {
                let _ = fs::remove_file(tmp);
            }
        }
    }
}

/// The name a file is called in messages.
fn display_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

fn read_input(path: &Path) -> Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut buf = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .context("cannot read standard input")?;
        Ok(buf)
    } else {
        fs::read(path).context("cannot read")
    }
}

/// Reads a file that should be a pexe; a NaCl manifest (JSON) is refused with a message
/// that says so and names the program it points at.
fn read_pexe(path: &Path) -> Result<Vec<u8>> {
    let data = read_input(path)?;
    match manifest_message(&data) {
        Some(m) => Err(anyhow!(m)),
        None => Ok(data),
    }
}

/// When `data` is a nexe the runtime runs (a static x86-64 command-line program, pre-IRT
/// or of the IRT era), its translation into a WASI command; `None` for anything else
/// (other nexes keep the converter's words for what they are). Functions that do not
/// lift trap when reached: a note names how many and the first one's instruction.
fn translate_nexe(name: &str, data: &[u8]) -> Result<Option<Vec<u8>>> {
    Ok(translate_nexe_kind(name, data)?.map(|(wasm, _)| wasm))
}

/// [`translate_nexe`], and whether the nexe is PNaCl's linker.
fn translate_nexe_kind(name: &str, data: &[u8]) -> Result<Option<(Vec<u8>, bool)>> {
    use pexe2wasm_nexe::x86_64::lift::{is_link_translator, translatable, translate_program};
    let Some(nexe) = translatable(data) else {
        return Ok(None);
    };
    let p = translate_program(&nexe).map_err(|e| anyhow!("{e}"))?;
    Ok(Some((
        noted_module(name, p),
        is_link_translator(&nexe.info),
    )))
}

/// A translated nexe's module, after a note on the functions that do not lift (they trap
/// when reached): how many, and the first one's instruction.
fn noted_module(name: &str, p: pexe2wasm_nexe::x86_64::lift::Program) -> Vec<u8> {
    if let Some((_, first)) = p.not_lifted.first() {
        eprintln!(
            "note: {name}: {} of {} functions are not translated yet and trap if reached (the first: {first})",
            p.not_lifted.len(),
            p.functions
        );
    }
    p.wasm
}

/// When `data` is a nexe (an ELF file), what `info` and `verify` say about it; another
/// ELF file is an error that names what it is.
fn nexe_report(data: &[u8]) -> Result<Option<pexe2wasm_nexe::NexeReport>> {
    if !pexe2wasm_nexe::is_elf(data) {
        return Ok(None);
    }
    pexe2wasm_nexe::NexeReport::of(data).map(Some).map_err(|e| {
        anyhow!(pexe2wasm_nexe::NativeInput::OtherElf {
            reason: e.to_string()
        })
    })
}

/// When `data` is a NaCl manifest (`.nmf`: JSON, so its first non-blank byte is `{`, which
/// no pexe or wasm module starts with), what to tell the user instead of a decode error.
fn manifest_message(data: &[u8]) -> Option<String> {
    let first = data.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'{' {
        return None;
    }
    const WHAT: &str = "a NaCl manifest (.nmf), not a pexe";
    let Ok(json) = pexe2wasm_nexe::native::parse_manifest(data) else {
        return Some("JSON text (a broken NaCl manifest?), not a pexe".to_string());
    };
    if let Some(app) = pexe2wasm_nexe::native::manifest_native_app(&json) {
        return Some(format!("a NaCl manifest (.nmf) of {app}"));
    }
    let (urls, _, _) = batch::manifest_urls(&json);
    Some(
        match urls.iter().find(|(k, _)| k == batch::PNACL_TRANSLATE) {
            Some((_, url)) => {
                format!("{WHAT}; its pnacl program is {url} (relative to the manifest's directory)")
            }
            None => format!(
                "{WHAT}; it names no pnacl program ({})",
                batch::PNACL_TRANSLATE
            ),
        },
    )
}

/// `verify`'s findings: each becomes its own `error: FILE: FINDING` line.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.iter().map(|f| f.to_string()).collect::<Vec<_>>().join("; "))]
struct Findings(Vec<pexe2wasm::verify::Finding>);

/// A bad combination of arguments that clap cannot see: exit status 2, like clap's.
#[derive(Debug, thiserror::Error)]
enum UsageError {
    #[error("batch reads and writes directories; '-' (stdin/stdout) is not one")]
    BatchStdio,
    #[error(transparent)]
    Batch(batch::BatchError),
}

/// Runs a command. Errors keep their chain (`anyhow::Context` on the way up, the file
/// outermost); [`report`] prints it once, in `main`.
fn run(command: Command) -> Result<ExitCode> {
    use commands as c;
    match command {
        Command::Dis { file, output } => in_file(&file, || c::dis(&file, output.as_deref())),
        Command::Asm { file, output } => in_file(&file, || c::asm(&file, &output)),
        Command::Info { file, json } => in_file(&file, || c::info(&file, json)),
        Command::Interp {
            file,
            function,
            args,
            trace,
            dump,
            max_steps,
        } => in_file(&file, || {
            let data = read_pexe(&file)?;
            let module = pexe2wasm::decode::decode(&data)?;
            interp::run(&module, &function, &args, trace, &dump, max_steps)
        }),
        Command::Verify { file, no_runnable } => in_file(&file, || c::verify(&file, no_runnable)),
        Command::Convert {
            file,
            output,
            wat,
            threads,
            small_code,
        } => in_file(&file, || {
            c::convert(&file, &output, wat, threads, small_code)
        }),
        Command::Run {
            file,
            args,
            env,
            dirs,
            resources,
            threads,
            max_threads,
            attrs,
            size,
            messages,
            timeout,
            frames,
            events,
            origin,
            url_map,
            storage,
            net,
        } => {
            let pepper = pepper::PepperArgs {
                attrs,
                size,
                json: messages == MessagesArg::Json,
                timeout,
                frames,
                events,
                origin,
                url_map,
                storage,
                net_loopback: net.is_some(),
            };
            let files = RunFiles { dirs, resources };
            run_program(&file, args, env, files, threads.into(), max_threads, pepper)
                .with_context(|| display_name(&file))
        }
        Command::Batch {
            dir,
            output,
            jobs,
            quiet,
            small_code,
            site: true,
        } => {
            let _ = jobs; // the converter itself uses every core
            web::batch_sites(&dir, &output, quiet, small_code)
        }
        Command::Batch {
            dir,
            output,
            jobs,
            quiet,
            small_code,
            site: false,
        } => run_batch(&dir, &output, jobs, quiet, small_code),
        Command::Web {
            file,
            output,
            page,
            size,
            url_map,
            refuse_unmapped,
            small_code,
        } => in_file(&file, || {
            c::web(&c::WebRequest {
                file: &file,
                output: &output,
                page: page.as_deref(),
                size: size.as_deref(),
                url_map: &url_map,
                refuse_unmapped,
                small_code,
            })
        }),
        Command::Host { output, npm: true } => in_file(&output, || c::host_npm(&output)),
        Command::Host { output, npm: false } => in_file(&output, || c::host(&output)),
        Command::Extension { output, firefox } => {
            in_file(&output, || c::extension(&output, firefox))
        }
        Command::Serve { dir, listen } => {
            serve::serve(&dir, listen)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A pexe converted for a site (`web`, `batch --site`): the module, what it needs, and
/// whether a page can embed it; the error in one line.
pub(crate) fn site_module(
    pexe: &[u8],
    small_code: bool,
) -> std::result::Result<pexe2wasm_site::Module, String> {
    let (wasm, needs) = stages::convert_with_needs(
        pexe,
        pexe2wasm::convert::Threads::Auto,
        pexe2wasm::convert::Locals::for_small_code(small_code),
    )
    .map_err(|e| format!("{e:#}"))?;
    use pexe2wasm::needs::Host;
    Ok(pexe2wasm_site::Module {
        wasm,
        plugin: matches!(needs.host, Some(Host::Pepper | Host::Browser)),
        needs: needs.summary,
    })
}

/// Runs `f` for FILE: its error gets FILE as the outermost context (`FILE: MESSAGE`).
fn in_file(file: &Path, f: impl FnOnce() -> Result<()>) -> Result<ExitCode> {
    f().map(|()| ExitCode::SUCCESS)
        .with_context(|| display_name(file))
}

/// Exit status of `run` when the program trapped, as for an abort (128 + SIGABRT).
const TRAP_EXIT: u8 = 134;

/// Exit status of `run` for a module no host here runs (a Pepper plugin converted without
/// the Pepper runtime): EX_UNAVAILABLE of sysexits.h, distinct from the statuses `run`
/// itself uses.
const NO_HOST_EXIT: u8 = 69;

/// `pexe2wasm run`: converts FILE (unless it is already wasm) and runs it; the program's
/// exit status becomes ours. A trap is an error ([`report`] prints it with the backtrace).
fn run_program(
    file: &Path,
    args: Vec<String>,
    env: Vec<String>,
    files: RunFiles,
    threads: pexe2wasm::convert::Threads,
    max_threads: Option<u32>,
    pepper_args: pepper::PepperArgs,
) -> Result<ExitCode> {
    let (wasm, mut opts) = match prepare_run(file, args, env, files, threads)? {
        Prepared::Ready(wasm, opts) => (wasm, opts),
        Prepared::Pepper(wasm, mut opts) => {
            opts.max_threads = max_threads.map(|n| n as usize);
            let _ = io::stdout().flush();
            let (status, _missing) = pepper::run(file, &wasm, opts, &pepper_args)?;
            return Ok(ExitCode::from((status & 0xff) as u8));
        }
        Prepared::NoHost(needs) => {
            eprintln!("error: {}: {needs}", display_name(file));
            return Ok(ExitCode::from(NO_HOST_EXIT));
        }
    };
    opts.max_threads = max_threads.map(|n| n as usize);
    if let Some(flag) = pepper_args.first_given() {
        anyhow::bail!("{flag} is for Pepper plugins; this is a command-line program");
    }
    if let Some(t) = pepper_args.timeout {
        if !(t.is_finite() && t >= 0.0) {
            anyhow::bail!("--timeout {t}: expected seconds >= 0");
        }
        opts.timeout = Some(std::time::Duration::from_secs_f64(t));
    }
    // Anything we printed must come before the program's output.
    let _ = io::stdout().flush();
    let outcome = stages::run_wasm(&wasm, &opts)?;
    Ok(ExitCode::from((outcome.exit_code & 0xff) as u8))
}

/// What `run` found in FILE.
enum Prepared {
    /// The module to run and how to run it.
    Ready(Vec<u8>, pexe2wasm_runner::RunOptions),
    /// A Pepper plugin, converted, and the WASI side of its run.
    Pepper(Vec<u8>, pexe2wasm_runner::RunOptions),
    /// A program no host of ours can run, and why.
    NoHost(String),
}

/// Whether a module we converted holds a Pepper plugin's data: its pexe's global data is
/// copied into the module verbatim, so the plugin's IRT query string is there (the runtime
/// itself never names that interface).
/// A nexe PNaCl's linker made holds the name through its IRT shim whatever the program:
/// with the shim's own hook and no `PPB_` interface named, it is a command-line program
/// (as `pexe2wasm_nexe` classifies the nexe).
fn wasm_is_pepper_plugin(wasm: &[u8]) -> bool {
    let has = |n: &str| memchr::memmem::find(wasm, n.as_bytes()).is_some();
    let needle = format!("{}\0", pexe2wasm::needs::PPAPI_HOOK_INTERFACE);
    let shim_only = has("nacl-irt-ppapihook-pnacl-private-0.1\0") && !has("PPB_");
    has(&needle) && !shim_only
}

/// The module to run (FILE converted, or FILE itself when it is wasm) and how to run it;
/// or, for a plugin, why it cannot run (found before converting it).
fn prepare_run(
    file: &Path,
    args: Vec<String>,
    env: Vec<String>,
    files: RunFiles,
    threads: pexe2wasm::convert::Threads,
) -> Result<Prepared> {
    let RunFiles { dirs, resources } = files;
    use pexe2wasm::needs::{needs_of_module, Host};
    // A manifest is refused here too (it never starts with wasm's magic).
    let data = read_pexe(file)?;
    let mut plugin = false;
    let nexe = translate_nexe_kind(&display_name(file), &data)?;
    // a linker converted earlier carries the link interface's name in its data
    let linker = match &nexe {
        Some((_, linker)) => *linker,
        None => {
            data.starts_with(b"\0asm")
                && memchr::memmem::find(
                    &data,
                    pexe2wasm_nexe::x86_64::lift::translator::LINK_INTERFACE_PREFIX.as_bytes(),
                )
                .is_some()
        }
    };
    if !linker && resources.is_some() {
        anyhow::bail!("--resources is for PNaCl's linker (a pnacl-ld nexe)");
    }
    let (args, link_dirs) = match resources {
        Some(dir) if linker => linker_inputs(&dir, args, &dirs)?,
        _ if linker => anyhow::bail!(
            "PNaCl's linker needs --resources DIR: the folder of crtbegin.o, libgcc.a, \
             libpnacl_irt_shim.a, … (or Chrome's pnacl_public_x86_64_* names)"
        ),
        _ => (args, Vec::new()),
    };
    let wasm = if let Some((wasm, _)) = nexe {
        // A Pepper nexe translates into a plugin with the pexes' Pepper ABI.
        plugin = pexe2wasm_runner::imports_module(&wasm, pexe2wasm::runtime::PEPPER_HOST);
        wasm
    } else if data.starts_with(b"\0asm") {
        if wasm_is_pepper_plugin(&data) {
            if !pexe2wasm_runner::imports_module(&data, pexe2wasm::runtime::PEPPER_HOST) {
                return Ok(Prepared::NoHost(
                    "a Pepper (PPAPI) plugin converted without the Pepper runtime (by an \
                     older pexe2wasm, or with --threads off): convert the pexe again"
                        .into(),
                ));
            }
            plugin = true;
        }
        data
    } else {
        let module = pexe2wasm::decode::decode(&data)?;
        let needs = needs_of_module(&module);
        if matches!(needs.host, Some(Host::Pepper | Host::Browser)) {
            if threads == pexe2wasm::convert::Threads::Off {
                anyhow::bail!(
                    "a Pepper plugin runs with threads, as in Chrome: --threads off cannot run it"
                );
            }
            plugin = true;
        }
        let opts = pexe2wasm::convert::ConvertOptions {
            threads,
            ..Default::default()
        };
        pexe2wasm::convert::convert_module(module, data.len(), &opts)?.wasm
    };
    let mut opts = pexe2wasm_runner::RunOptions {
        args: std::iter::once(file.display().to_string())
            .chain(args)
            .collect(),
        stdin: pexe2wasm_runner::Input::Inherit,
        stdout: pexe2wasm_runner::Output::Inherit,
        stderr: pexe2wasm_runner::Output::Inherit,
        ..Default::default()
    };
    for kv in env {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| anyhow!("--env {kv}: expected K=V"))?;
        opts.env.push((k.to_string(), v.to_string()));
    }
    for d in dirs {
        // `:ro` (or an explicit `:rw`) at the end says how the program may use it.
        let (spec, readonly) = match (d.strip_suffix(":ro"), d.strip_suffix(":rw")) {
            (Some(s), _) => (s, true),
            (_, Some(s)) => (s, false),
            _ => (d.as_str(), false),
        };
        let (host, guest) = match spec.split_once("::") {
            Some((h, g)) => (h.to_string(), g.to_string()),
            None => (spec.to_string(), spec.to_string()),
        };
        let list = if readonly {
            &mut opts.readonly_dirs
        } else {
            &mut opts.dirs
        };
        list.push((PathBuf::from(host), guest));
    }
    opts.readonly_dirs.extend(link_dirs);
    if plugin {
        return Ok(Prepared::Pepper(wasm, opts));
    }
    Ok(Prepared::Ready(wasm, opts))
}

/// A host directory and where the program sees it.
type GuestDir = (PathBuf, String);

/// The files `run` gives the program: `--dir`s, and PNaCl's linker's `--resources`.
struct RunFiles {
    dirs: Vec<String>,
    resources: Option<PathBuf>,
}

/// PNaCl's linker's inputs as the runtime takes them (`translator.rs`): the resource
/// folder is the first preopened directory, object `k`'s folder the `k + 2`th, and the
/// program's argument `k + 1` the object's name in it. Returns the program's arguments
/// and the directories.
fn linker_inputs(
    resources: &Path,
    objects: Vec<String>,
    dirs: &[String],
) -> Result<(Vec<String>, Vec<GuestDir>)> {
    use pexe2wasm_nexe::x86_64::lift::translator::MAX_OBJECTS;
    if !dirs.is_empty() {
        anyhow::bail!("--dir is not for PNaCl's linker: it reads only its objects and --resources");
    }
    if !resources.is_dir() {
        anyhow::bail!("--resources {}: not a directory", resources.display());
    }
    if objects.is_empty() {
        anyhow::bail!("PNaCl's linker needs the objects to link (pnacl-sz's output)");
    }
    if objects.len() > MAX_OBJECTS as usize {
        anyhow::bail!(
            "PNaCl's linker takes at most {MAX_OBJECTS} objects, not {}",
            objects.len()
        );
    }
    let mut dirs = vec![(resources.to_path_buf(), "/resources".to_string())];
    let mut names = Vec::new();
    for (k, o) in objects.iter().enumerate() {
        let path = Path::new(o);
        let meta = fs::metadata(path).with_context(|| format!("{o}: cannot read"))?;
        let name = path.file_name().filter(|_| meta.is_file());
        let Some(name) = name else {
            anyhow::bail!("{o}: not a file");
        };
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        dirs.push((parent, format!("/object{k}")));
        names.push(name.to_string_lossy().into_owned());
    }
    Ok((names, dirs))
}

/// `pexe2wasm batch`: plans, converts with a progress bar (on a terminal), writes the
/// reports, prints one `error:` line per failed file and a summary.
fn run_batch(
    dir: &Path,
    output: &Path,
    jobs: Option<u16>,
    quiet: bool,
    small_code: bool,
) -> Result<ExitCode> {
    use crate::batch::{BatchError, Status};
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    use io::IsTerminal;

    if dir.as_os_str() == "-" || output.as_os_str() == "-" {
        return Err(UsageError::BatchStdio.into());
    }
    let plan = match batch::plan(dir, output) {
        Ok(p) => p,
        // A bad pair of arguments: a usage error, like clap's.
        Err(e @ BatchError::Overlap { .. }) => return Err(UsageError::Batch(e).into()),
        Err(e) => return Err(batch_error(e, dir)),
    };
    let bar = if quiet || !io::stderr().is_terminal() {
        ProgressBar::hidden()
    } else {
        let bar =
            ProgressBar::with_draw_target(Some(plan.len() as u64), ProgressDrawTarget::stderr());
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30} {pos}/{len} [{elapsed}] {wide_msg}")
        {
            bar.set_style(style);
        }
        bar
    };
    let opts = batch::BatchOptions {
        threads: jobs.map_or(0, usize::from),
        convert: pexe2wasm::convert::ConvertOptions {
            locals: pexe2wasm::convert::Locals::for_small_code(small_code),
            ..Default::default()
        },
    };
    let progress = |f: &batch::FileReport| {
        bar.set_message(f.path.clone());
        bar.inc(1);
    };
    let result = plan.run(&opts, &progress);
    bar.finish_and_clear();
    let report_out = result.map_err(|e| batch_error(e, dir))?;
    batch::write_reports(&report_out, output).map_err(|e| batch_error(e, dir))?;
    // Failures after the bar, in path order, one line each.
    let stderr = io::stderr();
    let mut err = stderr.lock();
    for f in report_out
        .files
        .iter()
        .filter(|f| f.status == Status::Failed)
    {
        let message = f.error.as_ref().map_or("", |e| e.message.as_str());
        let _ = writeln!(err, "error: {}: {message}", dir.join(&f.path).display());
    }
    drop(err);
    let s = &report_out.summary;
    if !quiet {
        let mut out = io::stdout().lock();
        let skipped = match s.skipped {
            0 => String::new(),
            n => format!(", {n} skipped"),
        };
        let _ = writeln!(
            out,
            "{} of {} files converted: {}; {} failed{skipped}; report in {}",
            s.converted,
            s.files,
            s.converted_by_host.text(),
            s.failed,
            output.join("report.md").display()
        );
    }
    Ok(if s.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A batch error as a chain: DIR as its context unless the error names its own path.
fn batch_error(e: batch::BatchError, dir: &Path) -> anyhow::Error {
    match e {
        batch::BatchError::Threads { .. } => anyhow::Error::from(e).context(display_name(dir)),
        e => e.into(),
    }
}

/// Prints an error that reached `main`, one line per error whatever the messages hold:
/// `error: FILE: MESSAGE` with the whole chain; each of `verify`'s findings on its own
/// line; a trap with the wasm backtrace (exit status 134); usage errors without a file
/// (exit status 2). Otherwise the exit status is 1.
fn report(e: &anyhow::Error) -> ExitCode {
    let one_line = |m: &str| m.replace(['\n', '\r'], " ");
    let stderr = io::stderr();
    let mut err = stderr.lock();
    if let Some(u) = e.downcast_ref::<UsageError>() {
        let _ = writeln!(err, "error: {}", one_line(&u.to_string()));
        return ExitCode::from(2);
    }
    // `{e}` alone is the outermost context: the file.
    if let Some(pexe2wasm_runner::RunError::Trap(t)) = e.downcast_ref() {
        let _ = writeln!(err, "error: {e}: wasm trap: {}", one_line(&t.message));
        if !t.backtrace.is_empty() {
            let _ = writeln!(err, "wasm backtrace:");
            for frame in &t.backtrace {
                let _ = writeln!(err, "  {frame}");
            }
        }
        return ExitCode::from(TRAP_EXIT);
    }
    if let Some(Findings(findings)) = e.downcast_ref() {
        for f in findings {
            let _ = writeln!(err, "error: {e}: {}", one_line(&f.to_string()));
        }
    } else {
        let _ = writeln!(err, "error: {}", one_line(&format!("{e:#}")));
    }
    ExitCode::from(1)
}

fn main() -> ExitCode {
    // Before any thread allocates: keep freed memory for the next allocation instead of
    // page-faulting it in again (src/malloc.rs).
    pexe2wasm::malloc::tune_for_conversion();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and --version exit 0, usage errors 2 (clap's conventions).
        Err(e) => e.exit(),
    };
    match run(cli.command) {
        Ok(status) => status,
        Err(_) if BROKEN_PIPE.load(Ordering::Relaxed) => ExitCode::SUCCESS,
        Err(e) => report(&e),
    }
}
