//! One function per subcommand (what `run` in main.rs dispatches to), for those longer than
//! a few lines: each takes the subcommand's arguments and does its work; errors name what
//! went wrong, and `run` adds the input's name.

use super::*;

/// Disassembles a pexe (`dis`).
pub(crate) fn dis(file: &Path, output: Option<&Path>) -> Result<()> {
    let data = read_pexe(file)?;
    let mut out = Output::open(output)?;
    stages::disassemble(&data, out.writer())?;
    out.commit()
}

/// Assembles PNaClAsm text into a pexe (`asm`).
pub(crate) fn asm(file: &Path, output: &Path) -> Result<()> {
    let data = read_input(file)?;
    let text = String::from_utf8(data).map_err(|e| {
        anyhow!(
            "byte {}: the input is not UTF-8 text",
            e.utf8_error().valid_up_to()
        )
    })?;
    let bytes = stages::assemble(&text)?;
    let mut out = Output::open(Some(output))?;
    out.writer()
        .write_all(&bytes)
        .context("cannot write the output")?;
    out.commit()
}

/// What a pexe or nexe holds (`info`).
pub(crate) fn info(file: &Path, json: bool) -> Result<()> {
    let data = read_pexe(file)?;
    let mut out = Output::stdout();
    let w = out.writer();
    // A nexe gets its own facts (architecture, linking, runtime ABI, validation).
    let written = if let Some(report) = nexe_report(&data)? {
        if json {
            serde_json::to_writer_pretty(&mut *w, &report)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(w))
        } else {
            write!(w, "{report}")
        }
    } else if json {
        let info = pexe2wasm::info::info(&data)?;
        serde_json::to_writer_pretty(&mut *w, &info)
            .map_err(io::Error::from)
            .and_then(|()| writeln!(w))
    } else {
        write!(w, "{}", pexe2wasm::info::info(&data)?)
    };
    written.context("cannot write the output")?;
    out.commit()
}

/// Checks a pexe against the ABI and that it converts, or a nexe by NaCl's rules (`verify`).
pub(crate) fn verify(file: &Path, no_runnable: bool) -> Result<()> {
    let name = display_name(file);
    let data = read_pexe(file)?;
    // A nexe is checked by NaCl's own rules (x86-64 code by its validator).
    if let Some(report) = nexe_report(&data)? {
        let (accepted, line) = report.verdict();
        if !accepted {
            anyhow::bail!("{line}");
        }
        let mut out = Output::stdout();
        writeln!(out.writer(), "{name}: {line}").context("cannot write the output")?;
        return out.commit();
    }
    let module = pexe2wasm::decode::decode(&data)?;
    let mut findings = stages::verify(&module);
    if !no_runnable {
        findings.extend(stages::check_runnable(&module));
    }
    if !findings.is_empty() {
        return Err(Findings(findings).into());
    }
    // What it needs to run, unless only the ABI was asked about.
    let needs = (!no_runnable).then(|| pexe2wasm::needs::needs_of_module(&module));
    let (n_functions, n_globals) = (module.functions.len(), module.globals.len());
    let defined = module.function_bodies.len();
    // "ok" means it converts: whatever `convert` would reject (a stack frame too
    // large for wasm, …) is rejected here with the same message and position.
    if !no_runnable {
        let opts = pexe2wasm::convert::ConvertOptions::default();
        pexe2wasm::convert::convert_module(module, data.len(), &opts)?;
    }
    let mut out = Output::stdout();
    let counts = format!("({n_functions} functions, {defined} defined, {n_globals} globals)");
    // A valid pexe exits 0; the line says when it needs more than a WASI runtime,
    // and a plugin that nothing here can run is not called plain "ok".
    let line = match &needs {
        Some(n) if !n.available => {
            format!("{name}: valid, but cannot run here {counts}: {n}")
        }
        Some(n) if !n.runs_anywhere() => format!("{name}: ok {counts}; {n}"),
        _ => format!("{name}: ok {counts}"),
    };
    writeln!(out.writer(), "{line}").context("cannot write the output")?;
    out.commit()
}

/// Converts a pexe (or a pre-IRT command-line nexe) to a wasm module (`convert`).
pub(crate) fn convert(
    file: &Path,
    output: &Path,
    wat: bool,
    threads: ThreadsArg,
    small_code: bool,
) -> Result<()> {
    let name = display_name(file);
    let data = read_pexe(file)?;
    if let Some(wasm) = translate_nexe(&name, &data)? {
        return write_module(output, wat, &wasm);
    }
    let (wasm, needs) = stages::convert_with_needs(
        &data,
        threads.into(),
        pexe2wasm::convert::Locals::for_small_code(small_code),
    )?;
    write_module(output, wat, &wasm)?;
    // The module is written; say when stock WASI runtimes will not run it.
    if !needs.runs_anywhere() {
        eprintln!("note: {name}: {needs}");
    }
    Ok(())
}

/// What `web` was given on the command line.
pub(crate) struct WebRequest<'a> {
    pub file: &'a Path,
    pub output: &'a Path,
    pub page: Option<&'a Path>,
    pub size: Option<&'a str>,
    pub url_map: &'a [String],
    pub refuse_unmapped: bool,
    pub small_code: bool,
}

/// `web`: a site, or a pexe or an .nmf.
pub(crate) fn web(r: &WebRequest) -> Result<()> {
    if pexe2wasm_site::is_site_input(r.file) {
        web_site(r)
    } else {
        web_page(r)
    }
}

/// `web` for a site (a folder, a page, a Chrome app or an archive of one).
fn web_site(r: &WebRequest) -> Result<()> {
    if r.page.is_some() || r.size.is_some() {
        anyhow::bail!("--page and --size go with a pexe or an .nmf; a site keeps its own pages");
    }
    let config = web::config_settings(r.url_map, r.refuse_unmapped)?;
    let report = web::write_site(r.file, r.output, config, |pexe| {
        site_module(pexe, r.small_code)
    })?;
    web::print_site_summary(&report, r.output);
    if !report.runs {
        anyhow::bail!("{}", report.summary);
    }
    Ok(())
}

/// `web` for a pexe or an .nmf: a folder with the module, the host and a page.
fn web_page(r: &WebRequest) -> Result<()> {
    let size = match r.size {
        Some(s) => {
            let (w, h) = pepper::parse_size(s)?;
            (w as u32, h as u32)
        }
        None => (640, 480),
    };
    let args = web::WebArgs {
        input: r.file,
        out: r.output,
        page: r.page,
        size,
        url_map: r.url_map,
        refuse_unmapped: r.refuse_unmapped,
    };
    let written = web::write_folder(&args, |pexe| {
        let (wasm, needs) = stages::convert_with_needs(
            pexe,
            pexe2wasm::convert::Threads::Auto,
            pexe2wasm::convert::Locals::for_small_code(r.small_code),
        )?;
        use pexe2wasm::needs::Host;
        if !matches!(needs.host, Some(Host::Pepper | Host::Browser)) {
            anyhow::bail!(
                "not a Pepper plugin (it never queries nacl-irt-ppapihook-0.1); run it with `pexe2wasm run`"
            );
        }
        Ok(wasm)
    })?;
    println!(
        "wrote {}: {} (the page), {} (the module), pexe2wasm/ (the host)",
        written.dir.display(),
        written.page,
        written.module
    );
    if !written.copied.is_empty() {
        let n = written.copied.len();
        let shown = written.copied[..n.min(12)].join(", ");
        let more = if n > 12 {
            format!(", … ({n} files)")
        } else {
            String::new()
        };
        println!("copied beside the page: {shown}{more}");
    }
    println!("serve it: pexe2wasm serve {}", written.dir.display());
    Ok(())
}

/// `host --npm`: the host folder as an npm package.
pub(crate) fn host_npm(output: &Path) -> Result<()> {
    let written = host::write_npm(output)?;
    println!(
        "wrote {}: the npm package {} {} ({} files); `npm pack` there packs it, and `import {{ load }} from \"{}\"` runs a module",
        output.display(),
        host::NPM_NAME,
        env!("CARGO_PKG_VERSION"),
        written.len(),
        host::NPM_NAME
    );
    Ok(())
}

/// `host`: the drop-in folder.
pub(crate) fn host(output: &Path) -> Result<()> {
    let written = host::write_host(output)?;
    println!(
        "wrote {}: pexe2wasm.js and {} more files; add <script src=\"{}/pexe2wasm.js\"></script> to a page",
        output.display(),
        written.len() - 1,
        output
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("DIR")
    );
    Ok(())
}

/// `extension`: the browser extension, unpacked.
pub(crate) fn extension(output: &Path, firefox: bool) -> Result<()> {
    let written = extension::write_extension(output, firefox)?;
    println!(
        "wrote {}: the {} extension ({} files); {}",
        output.display(),
        if firefox { "Firefox" } else { "Chromium" },
        written.len(),
        if firefox {
            "load its manifest.json at about:debugging (Load Temporary Add-on)"
        } else {
            "load the folder at chrome://extensions (Load unpacked)"
        }
    );
    Ok(())
}

/// Writes a converted module to `output`, as text with `wat`.
fn write_module(output: &Path, wat: bool, wasm: &[u8]) -> Result<()> {
    let mut out = Output::open(Some(output))?;
    let written = if wat {
        let text = stages::print_wat(wasm)?;
        out.writer().write_all(text.as_bytes())
    } else {
        out.writer().write_all(wasm)
    };
    written.context("cannot write the output")?;
    out.commit()
}
