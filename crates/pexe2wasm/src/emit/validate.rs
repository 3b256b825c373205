//! Validation of the output with wasmparser, in pieces that keep it off the serial path.
//!
//! Every module we return has been validated, but not as one pass over the finished
//! bytes, whose section-by-section start (the sections before the code, then a payload
//! per body) ran on one thread after the module was assembled:
//! - the sections before the code section are validated as soon as they are written,
//!   alongside the lowering ([`Checker::new`], which also hands out one [`BodyCheck`] per
//!   pexe body);
//! - the bodies are validated in parallel ([`check_bodies`], [`check_linked`] for the
//!   linked bodies before them) while they are copied into the module, each at the offset
//!   it gets there, so errors point into the module;
//! - the rest (the linked bodies after the pexe's, the data and name sections, the
//!   module's end) once the module is complete ([`Checker::finish`]).
//!
//! The pieces are fed to one [`Validator`], in module order, so it checks exactly what a
//! validation of the whole module checks: [`Checker::finish`] walks the finished code
//! section and verifies that each pexe body it finds is as long as the one validated, at
//! the place it was validated, so the framing written around the bodies is checked too.

use wasmparser::{
    BinaryReader, Chunk, FuncToValidate, FuncValidatorAllocations, FunctionBody, Parser, Payload,
    Validator, ValidatorResources, WasmFeatures,
};

use super::EmitError;
use crate::lower::Used;

/// The wasm features the output may use: what every engine has had for years (the runtime
/// may use it), and the rest only where the lowering used it.
pub fn wasm_features(used: &Used, threads: bool) -> WasmFeatures {
    use wasmparser::WasmFeatures as W;
    let mut f = W::MUTABLE_GLOBAL
        | W::SIGN_EXTENSION
        | W::SATURATING_FLOAT_TO_INT
        | W::BULK_MEMORY
        | W::MULTI_VALUE
        | W::REFERENCE_TYPES
        | W::FLOATS;
    if threads {
        f |= W::THREADS;
    }
    if used.simd {
        f |= W::SIMD;
    }
    if used.exceptions {
        f |= W::EXCEPTIONS;
    }
    f
}

/// A module under validation: its sections before the code section are validated, and a
/// [`BodyCheck`] is handed out for each pexe function body.
pub struct Checker {
    validator: Validator,
    /// Length of the validated prefix (header and sections before the code section).
    prefix_len: usize,
    /// The linked modules' bodies before the pexe's, and after them (validated in
    /// [`Checker::finish`]).
    before: Vec<FuncToValidate<ValidatorResources>>,
    after: Vec<FuncToValidate<ValidatorResources>>,
    /// How many linked bodies come before the pexe's and after them (`before` and
    /// `after` may have been taken).
    n_before: usize,
    n_after: usize,
    n_pexe: usize,
}

/// What validating one pexe function body needs; sent to the job that lowers it.
pub struct BodyCheck(FuncToValidate<ValidatorResources>);

impl Checker {
    /// Validates `prefix` (a module's header and every section before its code section)
    /// and prepares the validation of a code section of `n_before` linked bodies, `n_pexe`
    /// pexe bodies and `n_after` linked bodies, in that order. `features` are those the
    /// prefix needs; each body adds what it used ([`BodyCheck::check`]).
    pub fn new(
        prefix: &[u8],
        features: WasmFeatures,
        n_before: usize,
        n_pexe: usize,
        n_after: usize,
    ) -> Result<(Checker, Vec<BodyCheck>), EmitError> {
        let mut validator = Validator::new_with_features(features);
        let mut declared = 0usize;
        // Parsed as the start of a longer input (`eof` false): the parser would otherwise
        // object that the code section is missing.
        let mut parser = Parser::new(0);
        let mut pos = 0;
        while pos < prefix.len() {
            let (consumed, payload) = match parser
                .parse(&prefix[pos..], false)
                .map_err(|e| invalid(None, e))?
            {
                Chunk::Parsed { consumed, payload } => (consumed, payload),
                Chunk::NeedMoreData(_) => {
                    return Err(framing("follows a section cut short".into()));
                }
            };
            pos += consumed;
            if let Payload::FunctionSection(r) = &payload {
                declared = r.count() as usize;
            }
            validator.payload(&payload).map_err(|e| invalid(None, e))?;
        }
        // The validator hands out one function per declared body (and asserts there is
        // one): a mismatch is reported here instead.
        let total = n_before + n_pexe + n_after;
        if total != declared {
            return Err(framing(format!(
                "holds {total} bodies, the function section declares {declared}"
            )));
        }
        let at = prefix.len() as u64;
        validator
            .code_section_start(&(at..at))
            .map_err(|e| invalid(None, e))?;
        // The function index and type of each body come from the validator's own count,
        // as they would for the bodies of a parsed code section (only the body's offset,
        // for errors, is read from the reader it is given).
        let empty = FunctionBody::new(BinaryReader::new(&[], prefix.len() as u64));
        let mut next = || {
            validator
                .code_section_entry(&empty)
                .map_err(|e| invalid(None, e))
        };
        let before = (0..n_before).map(|_| next()).collect::<Result<_, _>>()?;
        let pexe = (0..n_pexe)
            .map(|_| next().map(BodyCheck))
            .collect::<Result<_, _>>()?;
        let after = (0..n_after).map(|_| next()).collect::<Result<_, _>>()?;
        Ok((
            Checker {
                validator,
                prefix_len: prefix.len(),
                before,
                after,
                n_before,
                n_after,
                n_pexe,
            },
            pexe,
        ))
    }

    /// Validates what is left of `wasm` (the finished module, which starts with the
    /// prefix given to [`Checker::new`]): the linked bodies, that each pexe body is where
    /// it was validated with the length `lens` gives, the sections after the code
    /// section, and the module's end. `features` are the whole module's.
    /// When the writer already walked the code section (`walked`, from
    /// [`CodeWalk::walk`]), only its place is checked here.
    pub fn finish(
        self,
        wasm: &[u8],
        lens: &[usize],
        features: WasmFeatures,
        walked: Option<Walked>,
    ) -> Result<(), EmitError> {
        let Checker {
            mut validator,
            prefix_len,
            mut before,
            mut after,
            n_before,
            n_after,
            n_pexe,
        } = self;
        if lens.len() != n_pexe {
            return Err(framing(format!(
                "holds {} pexe bodies, {n_pexe} were validated",
                lens.len()
            )));
        }
        let total = n_before + n_pexe + n_after;
        let mut parser = Parser::new(0);
        let mut pos = 0usize;
        let mut in_prefix = true;
        loop {
            let (consumed, payload) = match parser
                .parse(&wasm[pos..], true)
                .map_err(|e| invalid(None, e))?
            {
                Chunk::Parsed { consumed, payload } => (consumed, payload),
                // Not with `eof` set.
                Chunk::NeedMoreData(_) => return Err(framing("is cut short".into())),
            };
            pos += consumed;
            match payload {
                Payload::CodeSectionStart {
                    count,
                    unchecked_range,
                    size,
                } => {
                    // The code section must follow the validated prefix directly (its id
                    // byte, then its size as the shortest LEB128).
                    let header = 1 + leb_len(unchecked_range.end - unchecked_range.start);
                    if unchecked_range.start != (prefix_len + header) as u64 {
                        return Err(framing("does not follow the validated sections".into()));
                    }
                    if count as usize != total {
                        return Err(framing(format!("holds {count} bodies, not {total}")));
                    }
                    let end = pos + size as usize;
                    let code = wasm
                        .get(pos..end)
                        .ok_or_else(|| framing("is cut short".into()))?;
                    if let Some(w) = walked {
                        // The entries were walked where they were written: the same bytes
                        // if the section is where the walk found it.
                        if (w.start, w.end) != (pos, end) {
                            return Err(framing("is not where its entries were checked".into()));
                        }
                    } else {
                        check_code(
                            code,
                            pos,
                            std::mem::take(&mut before),
                            n_before,
                            lens,
                            std::mem::take(&mut after),
                            features,
                            Some(wasm),
                        )?;
                    }
                    // The entries are walked above: the parser's payload per entry costs
                    // more than reading its size.
                    parser.skip_section();
                    pos = end;
                    in_prefix = false;
                }
                // Validated by `new`: the header and the sections before the code.
                _ if in_prefix => {}
                Payload::End(_) => {
                    validator.payload(&payload).map_err(|e| invalid(None, e))?;
                    return Ok(());
                }
                _ => {
                    validator.payload(&payload).map_err(|e| invalid(None, e))?;
                }
            }
        }
    }
}

/// Walks the entries of a code section (`code`, after its count, at `offset` in `wasm`,
/// which names the function of an error when given):
/// validates the linked bodies (the `n_before` first, unless [`Checker::take_before`]
/// took them, and `after`, after the pexe's) and checks that each pexe body has the
/// length it was validated with (`lens`).
#[allow(clippy::too_many_arguments)]
fn check_code<'a>(
    code: &'a [u8],
    offset: usize,
    before: Vec<FuncToValidate<ValidatorResources>>,
    n_before: usize,
    lens: &[usize],
    after: Vec<FuncToValidate<ValidatorResources>>,
    features: WasmFeatures,
    wasm: Option<&[u8]>,
) -> Result<(), EmitError> {
    let mut r = BinaryReader::new(code, offset as u64);
    let mut allocs = FuncValidatorAllocations::default();
    let entry = |r: &mut BinaryReader<'a>| read_entry(r).map_err(|e| invalid(None, e));
    let mut validate = |mut f: FuncToValidate<ValidatorResources>, body: BinaryReader<'_>| {
        f.features = features;
        let mut v = f.into_validator(std::mem::take(&mut allocs));
        v.validate(&FunctionBody::new(body))
            .map_err(|e| match wasm {
                Some(wasm) => invalid_at(wasm, e),
                None => invalid(None, e),
            })?;
        allocs = v.into_allocations();
        Ok::<(), EmitError>(())
    };
    let mut before = before.into_iter();
    for _ in 0..n_before {
        let (_, body) = entry(&mut r)?;
        if let Some(f) = before.next() {
            validate(f, body)?;
        }
    }
    for &want in lens {
        let (len, _) = entry(&mut r)?;
        if len != want {
            return Err(framing(format!(
                "holds a body of {len} bytes where {want} bytes were validated"
            )));
        }
    }
    for f in after {
        let (_, body) = entry(&mut r)?;
        validate(f, body)?;
    }
    if !r.eof() {
        return Err(framing("has bytes after its last body".into()));
    }
    Ok(())
}

/// One entry of a code section: its size, and a reader over its body (locals and code)
/// at the body's offset.
fn read_entry<'a>(
    r: &mut BinaryReader<'a>,
) -> Result<(usize, BinaryReader<'a>), wasmparser::BinaryReaderError> {
    let len = r.read_var_u32()? as usize;
    let at = r.original_position();
    let body = r.read_bytes(len)?;
    Ok((len, BinaryReader::new(body, at)))
}

/// The walk of the code section's entries, taken from a [`Checker`] by the code that
/// writes the section, so that the entries are read while they are in its cache.
pub struct CodeWalk {
    before: Vec<FuncToValidate<ValidatorResources>>,
    n_before: usize,
    after: Vec<FuncToValidate<ValidatorResources>>,
}

/// Where a [`CodeWalk`] found the code section's entries: `start..end` in the module.
#[derive(Clone, Copy, Debug)]
pub struct Walked {
    start: usize,
    end: usize,
}

impl CodeWalk {
    /// Walks `code`, the code section's entries (after its count) at `offset` in the
    /// module: each pexe body as long as `lens` says, the linked bodies not yet validated
    /// validated, nothing after the last.
    pub fn walk(
        self,
        code: &[u8],
        offset: usize,
        lens: &[usize],
        features: WasmFeatures,
    ) -> Result<Walked, EmitError> {
        check_code(
            code,
            offset,
            self.before,
            self.n_before,
            lens,
            self.after,
            features,
            None,
        )?;
        Ok(Walked {
            start: offset,
            end: offset + code.len(),
        })
    }
}

impl Checker {
    /// The walk of the code section (see [`CodeWalk`]); [`Checker::finish`] must then be
    /// given its result.
    pub fn take_code_walk(&mut self) -> CodeWalk {
        CodeWalk {
            before: std::mem::take(&mut self.before),
            n_before: self.n_before,
            after: std::mem::take(&mut self.after),
        }
    }

    /// The linked bodies before the pexe's, to validate alongside the pexe's
    /// ([`check_linked`]); [`Checker::finish`] then only checks their sizes.
    pub fn take_before(&mut self) -> Vec<FuncToValidate<ValidatorResources>> {
        std::mem::take(&mut self.before)
    }
}

/// Validates code section entries (`code`: sizes and bodies, one per `funcs`, at
/// `offset` in the module) and returns the first error.
pub fn check_linked(
    code: &[u8],
    offset: usize,
    funcs: Vec<FuncToValidate<ValidatorResources>>,
    features: WasmFeatures,
) -> Option<wasmparser::BinaryReaderError> {
    let mut r = BinaryReader::new(code, offset as u64);
    let mut allocs = FuncValidatorAllocations::default();
    for mut f in funcs {
        let body = match read_entry(&mut r) {
            Ok((_, body)) => body,
            Err(e) => return Some(e),
        };
        f.features = features;
        let mut v = f.into_validator(std::mem::take(&mut allocs));
        if let Err(e) = v.validate(&FunctionBody::new(body)) {
            return Some(e);
        }
        allocs = v.into_allocations();
    }
    None
}

impl BodyCheck {
    /// Validates `body` (a function body as the code section holds it, without its size:
    /// locals, then instructions) with the whole module's `features`. `offset` is where
    /// the body is in the finished module, so that errors point into it.
    fn check(
        self,
        body: &[u8],
        offset: usize,
        features: WasmFeatures,
        allocs: &mut FuncValidatorAllocations,
    ) -> Result<(), wasmparser::BinaryReaderError> {
        let mut f = self.0;
        f.features = features;
        let mut v = f.into_validator(std::mem::take(allocs));
        let r = v.validate(&FunctionBody::new(BinaryReader::new(body, offset as u64)));
        *allocs = v.into_allocations();
        r
    }
}

/// Validates the pexe's bodies in parallel (`checks[i]` for `bodies[i]`, which will be at
/// `offsets[i]` in the module) and returns the error at the lowest offset, if any, so
/// that the result does not depend on the number of threads.
pub fn check_bodies(
    checks: Vec<BodyCheck>,
    bodies: &[Vec<u8>],
    offsets: &[usize],
    features: WasmFeatures,
) -> Option<wasmparser::BinaryReaderError> {
    use rayon::prelude::*;
    let allocs = crate::scratch_pool::Pool::<FuncValidatorAllocations>::new();
    checks
        .into_par_iter()
        .zip(bodies)
        .zip(offsets)
        .with_min_len(16)
        .with_max_len(64)
        // Allocations reused from job to job (`crate::scratch_pool`).
        .map_init(
            || allocs.lend(),
            |allocs, ((c, b), &o)| c.check(b, o, features, allocs),
        )
        .filter_map(Result::err)
        .min_by_key(|e| e.offset())
}

/// The error for `e`, found in the finished module `wasm`, with the function it is in.
pub fn invalid_at(wasm: &[u8], e: wasmparser::BinaryReaderError) -> EmitError {
    EmitError::Invalid {
        function: function_at(wasm, e.offset()),
        message: e.to_string(),
    }
}

/// The name of the function whose body contains byte `offset` of `wasm` (from the name
/// section, else `#index`).
fn function_at(wasm: &[u8], offset: u64) -> Option<String> {
    let mut imported = 0u32;
    let mut index = 0u32;
    let mut found = None;
    let mut names = std::collections::HashMap::new();
    for p in Parser::new(0).parse_all(wasm) {
        match p.ok()? {
            Payload::ImportSection(r) => {
                imported = r
                    .into_imports()
                    .filter(|i| {
                        matches!(i.as_ref().map(|i| i.ty), Ok(wasmparser::TypeRef::Func(_)))
                    })
                    .count() as u32;
            }
            Payload::CodeSectionEntry(body) => {
                let r = body.range();
                if r.start <= offset && offset < r.end {
                    found = Some(imported + index);
                }
                index += 1;
            }
            Payload::CustomSection(c) => {
                if let wasmparser::KnownCustom::Name(n) = c.as_known() {
                    for sub in n.flatten() {
                        if let wasmparser::Name::Function(map) = sub {
                            for naming in map.into_iter().flatten() {
                                names.insert(naming.index, naming.name.to_string());
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let i = found?;
    Some(names.get(&i).cloned().unwrap_or_else(|| format!("#{i}")))
}

fn framing(what: String) -> EmitError {
    EmitError::Invalid {
        function: None,
        message: format!("internal: the code section {what}"),
    }
}

/// Length of the shortest unsigned LEB128 of `v` (as `wasm_encoder` writes it, through
/// the same encoder). Once per section and body, not per instruction.
pub(super) fn leb_len(v: u64) -> usize {
    leb128fmt::encode_u64(v).map_or(10, |(_, n)| n)
}

fn invalid(function: Option<String>, e: wasmparser::BinaryReaderError) -> EmitError {
    EmitError::Invalid {
        function,
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::{
        CodeSection, DataSection, Function, FunctionSection, Instruction, MemorySection,
        MemoryType, Module, RawSection, TypeSection, ValType,
    };

    /// A module of `n` functions `() -> i32` with a memory and one data segment, split
    /// into its prefix (everything before the code section) and the whole module built
    /// from `bodies` (each a body as the code section holds it, without its size).
    fn module(n: u32, bodies: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>) {
        let mut pre = Module::new();
        let mut types = TypeSection::new();
        types.ty().function([], [ValType::I32]);
        pre.section(&types);
        let mut funcs = FunctionSection::new();
        for _ in 0..n {
            funcs.function(0);
        }
        pre.section(&funcs);
        let mut mem = MemorySection::new();
        mem.memory(MemoryType {
            minimum: 1,
            maximum: None,
            memory64: false,
            shared: false,
            page_size_log2: None,
        });
        pre.section(&mem);
        let prefix = pre.clone().finish();
        let mut code = CodeSection::new();
        for b in bodies {
            code.raw(b);
        }
        pre.section(&code);
        let mut data = DataSection::new();
        data.active(0, &wasm_encoder::ConstExpr::i32_const(8), [1, 2, 3]);
        pre.section(&data);
        pre.section(&RawSection {
            id: 0,
            data: &[4, b'n', b'o', b't', b'e'],
        });
        (prefix, pre.finish())
    }

    fn body(ins: &[Instruction<'_>]) -> Vec<u8> {
        let mut f = Function::new([]);
        for i in ins {
            f.instruction(i);
        }
        f.instruction(&Instruction::End);
        let mut v = Vec::new();
        wasm_encoder::Encode::encode(&f, &mut v);
        // Without the size prefix (one byte for these small bodies).
        v.remove(0);
        v
    }

    fn features() -> WasmFeatures {
        wasm_features(&Used::default(), false)
    }

    #[test]
    fn valid_module_passes_piece_by_piece() {
        let good = body(&[Instruction::I32Const(7)]);
        // The linked bodies before and after are checked by `finish`.
        let bodies = vec![good.clone(), good.clone(), good.clone()];
        let (prefix, whole) = module(3, &bodies);
        let (c, checks) = Checker::new(&prefix, features(), 1, 1, 1).unwrap();
        assert_eq!(checks.len(), 1);
        let mut allocs = FuncValidatorAllocations::default();
        for ch in checks {
            ch.check(&good, 0, features(), &mut allocs).unwrap();
        }
        c.finish(&whole, &[good.len()], features(), None).unwrap();
    }

    #[test]
    fn invalid_pexe_body_is_an_error_at_its_offset() {
        // `i32.add` with nothing on the stack.
        let bad = body(&[Instruction::I32Add]);
        let (prefix, _) = module(1, std::slice::from_ref(&bad));
        let (_, checks) = Checker::new(&prefix, features(), 0, 1, 0).unwrap();
        let mut allocs = FuncValidatorAllocations::default();
        let e = checks
            .into_iter()
            .next()
            .unwrap()
            .check(&bad, 0, features(), &mut allocs)
            .unwrap_err();
        assert!(e.message().contains("type mismatch"), "{e}");
        // The offset counts from the body's start: the `i32.add` after the locals count.
        assert_eq!(e.offset(), 1);
    }

    /// Where each body's bytes (after its size) are in `whole`, as wasmparser finds them.
    fn body_offsets(whole: &[u8]) -> Vec<usize> {
        Parser::new(0)
            .parse_all(whole)
            .filter_map(|p| match p.unwrap() {
                Payload::CodeSectionEntry(b) => Some(b.range().start as usize),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn parallel_body_check_reports_the_first_error_in_the_module() {
        let good = body(&[Instruction::I32Const(7)]);
        // `i32.add` with nothing on the stack, and a body that returns nothing.
        let bad_add = body(&[Instruction::I32Add]);
        let bad_empty = body(&[]);
        let bodies = vec![good.clone(), bad_add, good.clone(), bad_empty];
        let (prefix, whole) = module(4, &bodies);
        let offsets = body_offsets(&whole);
        assert_eq!(offsets.len(), 4);
        let (_, checks) = Checker::new(&prefix, features(), 0, 4, 0).unwrap();
        let e = check_bodies(checks, &bodies, &offsets, features()).expect("invalid");
        // The error of the second body, at its `i32.add` (after the locals count), in
        // module offsets; the fourth body's error comes later in the module.
        assert_eq!(e.offset() as usize, offsets[1] + 1, "{e}");
        match invalid_at(&whole, e) {
            EmitError::Invalid { function, message } => {
                assert_eq!(function.as_deref(), Some("#1"));
                assert!(message.contains("type mismatch"), "{message}");
            }
            other => panic!("{other}"),
        }
        // All valid: no error.
        let goods = vec![good.clone(); 4];
        let (_, whole) = module(4, &goods);
        let (_, checks) = Checker::new(&prefix, features(), 0, 4, 0).unwrap();
        assert!(check_bodies(checks, &goods, &body_offsets(&whole), features()).is_none());
    }

    #[test]
    fn invalid_linked_body_is_found_by_finish() {
        let good = body(&[Instruction::I32Const(7)]);
        // Returns nothing where `() -> i32` needs an i32.
        let bad = body(&[]);
        let bodies = vec![good.clone(), bad];
        let (prefix, whole) = module(2, &bodies);
        let (c, checks) = Checker::new(&prefix, features(), 0, 1, 1).unwrap();
        let mut allocs = FuncValidatorAllocations::default();
        for ch in checks {
            ch.check(&good, 0, features(), &mut allocs).unwrap();
        }
        let e = c
            .finish(&whole, &[good.len()], features(), None)
            .unwrap_err();
        assert!(matches!(e, EmitError::Invalid { .. }), "{e}");
        assert!(e.to_string().contains("type mismatch"), "{e}");
    }

    #[test]
    fn linked_bodies_taken_before_are_validated_alongside() {
        let good = body(&[Instruction::I32Const(7)]);
        // Returns nothing where `() -> i32` needs an i32.
        let bad = body(&[]);
        let bodies = vec![bad.clone(), good.clone()];
        let (prefix, whole) = module(2, &bodies);
        let offsets = body_offsets(&whole);
        let (mut c, _) = Checker::new(&prefix, features(), 1, 1, 0).unwrap();
        let linked = c.take_before();
        assert_eq!(linked.len(), 1);
        // The first entry: its size (one byte here), then the body.
        let at = offsets[0] - 1;
        let e = check_linked(&whole[at..offsets[1] - 1], at, linked, features()).expect("invalid");
        assert!(e.message().contains("type mismatch"), "{e}");
        assert!(
            (offsets[0]..offsets[1]).contains(&(e.offset() as usize)),
            "{e}"
        );
        // `finish` only walks the taken body now: the rest of the module is valid.
        c.finish(&whole, &[good.len()], features(), None).unwrap();
        // With the bodies valid, nothing is reported.
        let goods = vec![good.clone(), good.clone()];
        let (_, whole) = module(2, &goods);
        let offsets = body_offsets(&whole);
        let at = offsets[0] - 1;
        let (mut c, _) = Checker::new(&prefix, features(), 1, 1, 0).unwrap();
        let linked = c.take_before();
        assert!(check_linked(&whole[at..offsets[1] - 1], at, linked, features()).is_none());
    }

    #[test]
    fn code_walk_by_the_writer_checks_the_same_entries() {
        let good = body(&[Instruction::I32Const(7)]);
        // Returns nothing where `() -> i32` needs an i32.
        let bad = body(&[]);
        let bodies = vec![good.clone(), good.clone(), good.clone()];
        let (prefix, whole) = module(3, &bodies);
        let offsets = body_offsets(&whole);
        // The entries start at the first body's size (one byte here) and end where the
        // last body does (the code section's end).
        let (start, end) = (offsets[0] - 1, offsets[2] + good.len());
        let (mut c, _) = Checker::new(&prefix, features(), 1, 1, 1).unwrap();
        let walked = c
            .take_code_walk()
            .walk(&whole[start..end], start, &[good.len()], features())
            .unwrap();
        c.finish(&whole, &[good.len()], features(), Some(walked))
            .unwrap();
        // A pexe body of another length than validated.
        let (mut c, _) = Checker::new(&prefix, features(), 1, 1, 1).unwrap();
        let e = c
            .take_code_walk()
            .walk(&whole[start..end], start, &[good.len() + 1], features())
            .unwrap_err();
        assert!(e.to_string().contains("bytes were validated"), "{e}");
        // A walk of other bytes than the module's code section.
        let (mut c, _) = Checker::new(&prefix, features(), 1, 1, 1).unwrap();
        let walked = c
            .take_code_walk()
            .walk(&whole[start..end], start + 1, &[good.len()], features())
            .unwrap();
        let e = c
            .finish(&whole, &[good.len()], features(), Some(walked))
            .unwrap_err();
        assert!(
            e.to_string().contains("where its entries were checked"),
            "{e}"
        );
        // An invalid linked body after the pexe's is found by the walk.
        let with_bad = vec![good.clone(), good.clone(), bad.clone()];
        let (_, whole) = module(3, &with_bad);
        let end = offsets[2] + bad.len();
        let (mut c, _) = Checker::new(&prefix, features(), 1, 1, 1).unwrap();
        let e = c
            .take_code_walk()
            .walk(&whole[start..end], start, &[good.len()], features())
            .unwrap_err();
        assert!(e.to_string().contains("type mismatch"), "{e}");
    }

    #[test]
    fn framing_mismatches_are_errors_not_panics() {
        let good = body(&[Instruction::I32Const(7)]);
        let (prefix, whole) = module(2, &[good.clone(), good.clone()]);
        // More bodies than the function section declares (wasmparser would assert).
        let e = Checker::new(&prefix, features(), 0, 3, 0).err().unwrap();
        assert!(e.to_string().contains("declares 2"), "{e}");
        // A body whose length differs from the one validated in its job.
        let (c, _) = Checker::new(&prefix, features(), 0, 2, 0).unwrap();
        let e = c
            .finish(&whole, &[good.len(), good.len() + 1], features(), None)
            .unwrap_err();
        assert!(e.to_string().contains("bytes were validated"), "{e}");
        // A finished module that does not start with the validated prefix.
        let (other_prefix, _) = module(2, &[]);
        let mut longer = other_prefix.clone();
        longer.extend_from_slice(&[0, 3, 1, b'x', 0]);
        let (c, _) = Checker::new(&longer, features(), 0, 2, 0).unwrap();
        let e = c
            .finish(&whole, &[good.len(), good.len()], features(), None)
            .unwrap_err();
        assert!(e.to_string().contains("does not follow"), "{e}");
        // Lengths for fewer pexe bodies than were handed out.
        let (c, _) = Checker::new(&prefix, features(), 0, 2, 0).unwrap();
        assert!(c.finish(&whole, &[good.len()], features(), None).is_err());
    }

    #[test]
    fn prefix_cut_inside_a_section_is_an_error() {
        let (prefix, _) = module(1, &[]);
        let e = Checker::new(&prefix[..prefix.len() - 1], features(), 0, 1, 0)
            .err()
            .unwrap();
        assert!(e.to_string().contains("cut short"), "{e}");
    }
}
