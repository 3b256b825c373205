//! Real Pepper plugins through `pexe2wasm run` and the command-line Pepper host: the
//! message apps do what SOURCES.md says, messages travel as text lines or JSON Lines, and
//! apps that need a browser start and name what they lack.

use crate::cmd::text;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Output, Stdio};

use pexe2wasm_testkit::corpus as common;
use serde_json::{json, Value};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
}

/// Runs the real plugin `name` with `args`, its standard input `input`; `None` (skipped)
/// without the corpus. The time limit after the end of input keeps a broken run from
/// hanging the suite.
fn run_plugin(name: &str, args: &[&str], input: &str) -> Option<Output> {
    common::real_pexe(name)?;
    let path = common::real_corpus_dir().join(name);
    let mut c = bin();
    c.arg("run").arg(&path);
    if !args.contains(&"--timeout") {
        c.args(["--timeout", "120"]);
    }
    Some(pexe2wasm_testkit::output_with_stdin(
        c.args(args),
        input.as_bytes(),
    ))
}

#[test]
fn lpdevs_part2_answers_hello() {
    let Some(o) = run_plugin("lpdevs-part2.pexe", &[], "hello\nhello\n") else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "hello from NaCl\nhello from NaCl\n");
}

/// The primes up to `n`, by a sieve.
fn primes(n: i32) -> Vec<i32> {
    let n = n.max(0) as usize;
    let mut composite = vec![false; n + 1];
    let mut out = Vec::new();
    for i in 2..=n {
        if !composite[i] {
            out.push(i as i32);
            let mut j = i * i;
            while j <= n {
                composite[j] = true;
                j += i;
            }
        }
    }
    out
}

fn array_buffer(v: &Value) -> Vec<u8> {
    use base64::Engine;
    let b64 = v["$arraybuffer"]
        .as_str()
        .unwrap_or_else(|| panic!("not an array buffer: {v}"));
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap()
}

#[test]
fn cptaffe_hello_tutorial_says_online_and_sieves_primes() {
    let ns = [2, 3, 10, 30, 100, 1000, 7919];
    let input: String = ns.iter().map(|n| format!("{n}\n")).collect();
    let Some(o) = run_plugin(
        "cptaffe-hello_tutorial.pexe",
        &["--messages", "json"],
        &input,
    ) else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(lines[0], json!("C++ program online."));
    assert_eq!(lines.len(), 1 + ns.len(), "{out}");
    for (n, v) in ns.iter().zip(&lines[1..]) {
        let bytes = array_buffer(v);
        let got: Vec<i32> = bytes
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        // The program (main.cpp at the commit that built this pexe) sizes its buffer by
        // the primes its sieve of Atkin finds above 3 (its count starts uninitialized,
        // 0 here) and fills it with 2, 3 and the primes in order: the first K primes,
        // K = the number of primes in (3, N]. These N avoid its other slips (N a prime
        // square, or a prime of the form 12k + 7).
        let all = primes(*n);
        let k = all.iter().filter(|&&p| p > 3).count();
        assert_eq!(got, all[..k], "N = {n}");
    }
    // In text mode the same start message is a plain line.
    let Some(o) = run_plugin("cptaffe-hello_tutorial.pexe", &[], "") else {
        return;
    };
    assert_eq!(text(&o.stdout), "C++ program online.\n");
}

#[test]
fn optionsplayers_hello_tutorial_starts_and_ends_cleanly() {
    // It has no PPB_Messaging: messages to it are dropped, nothing comes back.
    let Some(o) = run_plugin("optionsplayers-hello_tutorial.pexe", &[], "anyone there?\n") else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
    assert!(!text(&o.stderr).contains("error"), "{}", text(&o.stderr));
}

#[test]
fn webpenc_encodes_what_a_webp_decoder_reads_back() {
    use base64::Engine;
    let (w, h) = (37u32, 23u32);
    let rgba: Vec<u8> = (0..w * h * 4)
        .map(|i| ((i * 7 + i / 13) % 256) as u8)
        .collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&rgba);
    let lossless = json!({"rgba": {"$arraybuffer": b64}, "width": w, "height": h,
                          "quality": "lossless", "id": 1});
    let lossy = json!({"rgba": {"$arraybuffer": b64}, "width": w, "height": h,
                       "quality": 75, "id": 2});
    let bad = json!({"rgba": {"$arraybuffer": "AAAA"}, "width": w, "height": h, "id": 3});
    let input = format!("{lossless}\n{lossy}\n{bad}\n");
    let Some(o) = run_plugin("webpenc.pexe", &["--messages", "json"], &input) else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{out}");
    for (reply, id) in lines[..2].iter().zip([1, 2]) {
        assert_eq!(reply["id"], id, "{reply}");
        let webp = array_buffer(&reply["data"]);
        assert_eq!(&webp[..4], b"RIFF");
        let mut d = image_webp::WebPDecoder::new(std::io::Cursor::new(webp)).unwrap();
        assert_eq!(d.dimensions(), (w, h));
        let mut pixels = vec![0; d.output_buffer_size().unwrap()];
        d.read_image(&mut pixels).unwrap();
        if id == 1 {
            assert!(d.has_alpha());
            assert!(pixels == rgba, "lossless is exact");
        }
    }
    assert_eq!(lines[2], json!({"Error": "ArrayBuffer length error :3"}));
}

/// A Stockfish session over a pipe: what it printed up to and including `bestmove`.
struct Engine {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl Engine {
    fn start() -> Option<Engine> {
        common::real_pexe("stockfish-170317.pexe")?;
        let mut child = bin()
            .arg("run")
            .arg(common::real_corpus_dir().join("stockfish-170317.pexe"))
            .args(["--timeout", "120"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Some(Engine { child, out })
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Lines up to and including the first that starts with `until`.
    fn read_until(&mut self, until: &str) -> Vec<String> {
        let mut lines = Vec::new();
        loop {
            let mut l = String::new();
            if self.out.read_line(&mut l).unwrap() == 0 {
                panic!("the engine stopped before {until:?}: {lines:?}");
            }
            let l = l.trim_end().to_string();
            let done = l.starts_with(until);
            lines.push(l);
            if done {
                return lines;
            }
        }
    }

    /// Its OS threads that run module code ("wasm thread N").
    #[cfg(target_os = "linux")]
    fn wasm_threads(&self) -> usize {
        let dir = format!("/proc/{}/task", self.child.id());
        std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|c| c.starts_with("wasm thread"))
            .count()
    }

    fn finish(mut self) -> Output {
        drop(self.child.stdin.take());
        let o = self.child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        o
    }
}

/// Checks a search's output: `info depth` lines up to `depth`, then a legal `bestmove`
/// after 1. e4.
fn check_search(lines: &[String], depth: u32) {
    use shakmaty::uci::UciMove;
    use shakmaty::{Chess, Position};
    let depths: Vec<u32> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("info depth "))
        .filter_map(|r| r.split_whitespace().next()?.parse().ok())
        .collect();
    assert!(depths.contains(&depth), "{lines:?}");
    let best = lines.last().unwrap();
    let mv = best
        .strip_prefix("bestmove ")
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("{best}"));
    let mut pos = Chess::default();
    let e4: UciMove = "e2e4".parse().unwrap();
    let m = e4.to_move(&pos).unwrap();
    pos.play_unchecked(&m);
    let reply: UciMove = mv.parse().unwrap();
    assert!(reply.to_move(&pos).is_ok(), "{mv} is not legal after 1. e4");
}

#[test]
fn stockfish_speaks_uci_and_plays_a_legal_move() {
    let Some(mut e) = Engine::start() else {
        return;
    };
    e.send("uci");
    let lines = e.read_until("uciok");
    assert!(
        lines.iter().any(|l| l.starts_with("id name Stockfish")),
        "{lines:?}"
    );
    e.send("isready");
    assert_eq!(e.read_until("readyok").last().unwrap(), "readyok");
    e.send("position startpos moves e2e4");
    e.send("go depth 12");
    let lines = e.read_until("bestmove");
    check_search(&lines, 12);
    // One search thread besides the main one.
    #[cfg(target_os = "linux")]
    let one = e.wasm_threads();
    e.send("setoption name Threads value 2");
    e.send("isready");
    e.read_until("readyok");
    e.send("ucinewgame");
    e.send("position startpos moves e2e4");
    e.send("go depth 12");
    let lines = e.read_until("bestmove");
    check_search(&lines, 12);
    #[cfg(target_os = "linux")]
    {
        let two = e.wasm_threads();
        assert_eq!(
            two,
            one + 1,
            "Threads 2 adds a search thread ({one} before)"
        );
    }
    let o = e.finish();
    // Console and the app's own writes go to stderr, never to stdout.
    assert!(text(&o.stdout).is_empty());
}

#[test]
fn plugins_that_need_a_browser_start_and_name_what_they_lack() {
    for name in ["glbench27.pexe", "bp2008-pnacl_player.pexe"] {
        let Some(o) = run_plugin(name, &[], "") else {
            return;
        };
        let err = text(&o.stderr);
        let note: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("note: ") && l.contains("got NULL"))
            .collect();
        assert_eq!(note.len(), 1, "{name}: {err}");
        // It names the interfaces it lacks, each one the host does not offer, and who can
        // back them.
        let named = note[0]
            .split("asked for ")
            .nth(1)
            .unwrap()
            .split(", which")
            .next()
            .unwrap();
        for i in named.split(", ") {
            assert!(
                !pexe2wasm_ppapi::hosts::cli_offers(i),
                "{name}: {i} is offered"
            );
        }
        // GL: GLBench fails at its GL binding (OpenGLES2), the player at its context.
        assert!(
            note[0].contains("PPB_Graphics3D;1.0") || note[0].contains("PPB_OpenGLES2;1.0"),
            "{name}: {}",
            note[0]
        );
        assert!(note[0].contains("only a browser can back"), "{}", note[0]);
        // Graphics3D and OpenGLES2 are the browser host's: the note sends the user there.
        assert!(
            note[0].contains("run it in a browser: `pexe2wasm web`"),
            "{}",
            note[0]
        );
        // The GL player asserts and aborts; GLBench says it cannot start GL and ends.
        if name.starts_with("bp2008") {
            assert_eq!(o.status.code(), Some(134), "{err}");
        } else {
            assert!(err.contains("Unable to initialize GL PPAPI!"), "{err}");
        }
    }
}

#[test]
fn astar_star_solves_a_path_sent_as_json_commands() {
    // Its start code calls main(void) with three arguments through a pointer (adapted,
    // decision 0016). Its page sends JSON commands as strings: nodes, their connections,
    // then the two ends; it answers with the path. A message that is not JSON: "error".
    let input = [
        r#"{"command":"setNodes","nodes":[{"x":0,"y":0},{"x":1,"y":0},{"x":2,"y":0},{"x":1,"y":5}]}"#,
        r#"{"command":"setConnections","nodes":[[1,3],[0,2],[1],[0,2]]}"#,
        r#"{"command":"solve","nodes":[0,2]}"#,
        "not json",
    ]
    .map(|l| format!("{l}\n"))
    .concat();
    let Some(o) = run_plugin("astar-star.pexe", &[], &input) else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The short way (through node 1), not the detour through node 3.
    assert_eq!(text(&o.stdout), "{\"array\":[0, 1, 2]}\nerror\n");
}

#[test]
fn messages_in_json_lines_keep_their_types_and_bad_lines_are_named() {
    // lpdevs-part2 answers only "hello"; a malformed line is reported and skipped.
    let Some(o) = run_plugin(
        "lpdevs-part2.pexe",
        &["--messages", "json"],
        "{\"broken\": \n\"hello\"\n",
    ) else {
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "\"hello from NaCl\"\n");
    assert!(
        text(&o.stderr).contains("input line not sent"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn supernet_iguana_starts_with_loopback_network_and_storage() {
    // The crypto-currency node: its start-up makes its persistent file system, saves a
    // key file there and starts helper threads (a void routine each, called for a result
    // by its pthread library, decision 0016), then keeps polling. Its page sent it
    // dictionaries. The input stays open until the helpers have started (however slow the
    // machine), then the time limit after its end stops the polling node.
    if common::real_pexe("supernet-iguana.pexe").is_none() {
        return;
    }
    let storage = common::Scratch::new("iguana");
    let mut child = bin()
        .arg("run")
        .arg(common::real_corpus_dir().join("supernet-iguana.pexe"))
        .args([
            "--messages",
            "json",
            "--net",
            "loopback",
            "--timeout",
            "2",
            "--storage",
        ])
        .arg(storage.join("fs"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{{\"agent\":\"SuperNET\",\"method\":\"help\"}}").unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !lines
        .iter()
        .any(|l: &String| l.contains("HELPER.0 started"))
    {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => lines.push(l),
            Err(_) => {
                let _ = child.kill();
                panic!("iguana's helpers did not start: {lines:?}");
            }
        }
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    reader.join().unwrap();
    lines.extend(rx.try_iter());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let first: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first, json!("finished DidCreate iguana\n"));
    // A dictionary is what it takes (a string would get "Got unexpected message type").
    assert!(
        !lines.iter().any(|l| l.contains("unexpected message type")),
        "{lines:?}"
    );
    let confs = std::fs::read_dir(storage.join("fs/persistent/confs")).unwrap();
    assert!(confs.count() >= 1, "no key file saved");
    assert!(!text(&o.stderr).contains("trap"), "{}", text(&o.stderr));
}
