//! Running the `pexe2wasm` binary under test, and reading what it printed: the helpers
//! every module of these tests shares.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `pexe2wasm ARGS` with no standard input, run to its end.
pub(crate) fn pexe2wasm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `pexe2wasm run` of the PNaClAsm plugin `src` (assembled into a scratch folder `name`)
/// with `args`, `input` on its standard input and `--timeout` as a guard.
pub(crate) fn run_assembled(
    name: &str,
    src: &str,
    timeout: &str,
    args: &[&str],
    input: &[u8],
) -> Output {
    let dir = pexe2wasm_testkit::corpus::Scratch::new(name);
    let pexe = format!("{name}.pexe");
    let bytes = pexe2wasm::text::assemble(src).expect("the fixture assembles");
    dir.put(&pexe, &bytes);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pexe2wasm"));
    cmd.arg("run")
        .arg(dir.join(&pexe))
        .args(["--timeout", timeout])
        .args(args);
    pexe2wasm_testkit::output_with_stdin(&mut cmd, input)
}

/// Panics unless the run exited with `code`, saying `what` on its standard error.
#[track_caller]
pub(crate) fn fails_saying(o: &Output, code: i32, what: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(err.contains(what), "{err}");
}

/// Spawns `cmd` with its stdout piped and reads the first line it prints (where a server
/// listens).
pub(crate) fn spawn_announcing(cmd: &mut Command) -> (std::process::Child, String) {
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    (child, line)
}

/// What a run printed on its standard error, as text.
pub(crate) fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// What a run printed, as text.
pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Panics unless `got == want`, saying where they part (not printing kilobytes).
#[track_caller]
pub(crate) fn same(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let at = got.iter().zip(want).take_while(|(a, b)| a == b).count();
        panic!(
            "{what}: {} bytes, {} expected; they differ from byte {at}",
            got.len(),
            want.len()
        );
    }
}

/// Whether `tool` is on the PATH; says SKIPPED when it is not.
pub(crate) fn have(tool: &str) -> bool {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {tool}"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: {tool} not found");
    }
    found
}

/// A pipe in "packet mode" (O_DIRECT): each write(2) into it is read back by one read(2)
/// (for writes up to PIPE_BUF, 4096 bytes), so its reader counts the writer's calls.
pub(crate) fn packet_pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two descriptors on success, which we then own.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_DIRECT | libc::O_CLOEXEC) };
    assert_eq!(r, 0, "pipe2: {}", std::io::Error::last_os_error());
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// The write(2) calls to fd 1 in an `strace -f -o LOG` log.
pub(crate) fn fd1_writes(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter(|l| l.contains("write(1,") || l.contains("writev(1,"))
        .count()
}
