//! Negative tests of the PNaCl ABI verifier: each test builds a small module in Rust that
//! breaks one rule and asserts the specific finding. Each starts from a module that
//! verifies cleanly, so removing the rule makes its test fail.

use pexe2wasm::bitstream::Header;
use pexe2wasm::ir::intrinsics::memory_order as mo;
use pexe2wasm::ir::{
    Align, BinOp, BlockId, Call, Callee, CastOp, CmpPred, ConstValue, Constant, Element, FuncId,
    Function, FunctionDecl, FunctionType, GlobalVar, Initializer, Inst, InstKind, Intrinsic,
    Linkage, Module, Span, Switch, SwitchCase, Type, TypeId, TypeTable, ValueId,
};
use pexe2wasm::verify::{check_runnable, verify, Context, Finding, Rule};

// ---------------------------------------------------------------------------------------
// A tiny IR builder.

struct B {
    m: Module,
}

impl B {
    fn new() -> B {
        B {
            m: Module {
                header: Header::standard(),
                version: 1,
                types: TypeTable::new(),
                functions: Vec::new(),
                globals: Vec::new(),
                function_bodies: Vec::new(),
            },
        }
    }

    /// A declared type (reused if already present).
    fn ty(&mut self, t: Type) -> TypeId {
        match self.m.types.find(&t) {
            Some(id) => id,
            None => self.m.types.push_declared(t),
        }
    }
    fn void(&mut self) -> TypeId {
        self.ty(Type::Void)
    }
    fn int(&mut self, w: u32) -> TypeId {
        self.ty(Type::Int(w))
    }
    fn i32(&mut self) -> TypeId {
        self.int(32)
    }
    fn float(&mut self) -> TypeId {
        self.ty(Type::Float)
    }
    fn double(&mut self) -> TypeId {
        self.ty(Type::Double)
    }
    fn vec(&mut self, len: u32, elem: TypeId) -> TypeId {
        self.ty(Type::Vector { len, elem })
    }
    fn fn_ty(&mut self, ret: TypeId, params: &[TypeId]) -> TypeId {
        self.ty(Type::Function(FunctionType {
            vararg: false,
            ret,
            params: params.to_vec(),
        }))
    }

    fn add_fn(&mut self, name: &str, ty: TypeId, is_proto: bool, linkage: Linkage) -> u32 {
        self.m.functions.push(FunctionDecl {
            ty,
            cc: 0,
            is_proto,
            linkage,
            name: Some(name.to_string()),
            intrinsic: Intrinsic::from_name(name),
            body: None,
            bit: 100 + 10 * self.m.functions.len() as u64,
        });
        self.m.functions.len() as u32 - 1
    }
    /// An internal function definition (its body comes from [`B::body`]).
    fn define(&mut self, name: &str, ret: TypeId, params: &[TypeId]) -> u32 {
        let t = self.fn_ty(ret, params);
        self.add_fn(name, t, false, Linkage::Internal)
    }
    /// The entry point: `define external void @_start(i32)`.
    fn start(&mut self) -> u32 {
        let (v, i) = (self.void(), self.i32());
        let t = self.fn_ty(v, &[i]);
        self.add_fn("_start", t, false, Linkage::External)
    }
    /// An external declaration (an intrinsic, normally).
    fn declare(&mut self, name: &str, ret: TypeId, params: &[TypeId]) -> u32 {
        let t = self.fn_ty(ret, params);
        self.add_fn(name, t, true, Linkage::External)
    }
    fn global(&mut self, init: Initializer, align: u32) -> u32 {
        self.m.globals.push(GlobalVar {
            align: Align(align),
            is_const: false,
            init,
            name: None,
            bit: 5000 + 10 * self.m.globals.len() as u64,
        });
        self.m.globals.len() as u32 - 1
    }

    /// Starts the body of `decl` with these constants. Declarations and globals must all
    /// exist by now (value ids depend on their count).
    fn body(&mut self, decl: u32, consts: &[(TypeId, ConstValue)]) -> F {
        let ft = self
            .m
            .types
            .function(self.m.functions[decl as usize].ty)
            .unwrap()
            .clone();
        let base = (self.m.functions.len() + self.m.globals.len()) as u32;
        let void = self.void();
        F {
            f: Function {
                decl: FuncId(decl),
                base,
                num_params: ft.params.len() as u32,
                consts: consts
                    .iter()
                    .map(|&(ty, value)| Constant { ty, value })
                    .collect(),
                bit: 10_000 * (decl as u64 + 1),
                ..Default::default()
            },
            void,
        }
    }
    /// Gives `decl` a body of one block that only returns.
    fn empty_body(&mut self, decl: u32) {
        let mut f = self.body(decl, &[]);
        f.block();
        f.ret();
        self.finish(f);
    }
    fn finish(&mut self, f: F) {
        let mut f = f.f;
        f.num_blocks = f.block_starts.len() as u32;
        let idx = self.m.function_bodies.len() as u32;
        self.m.functions[f.decl.index()].body = Some(idx);
        self.m.function_bodies.push(f);
    }
    fn build(self) -> Module {
        self.m
    }
}

/// A function body under construction.
struct F {
    f: Function,
    void: TypeId,
}

/// An instruction to append. Calls and phis carry their operand lists, which `F::push`
/// moves into the body's pools (`Function::call_args`, `Function::phi_incoming`).
enum K {
    I(InstKind),
    Call(Callee, Vec<ValueId>, u32),
    Phi(Vec<(ValueId, u32)>),
}

impl From<InstKind> for K {
    fn from(k: InstKind) -> K {
        K::I(k)
    }
}

impl K {
    /// The instruction, its operand list appended to `f`'s pool.
    fn into_kind(self, f: &mut Function) -> InstKind {
        match self {
            K::I(k) => k,
            K::Call(callee, args, cc) => InstKind::Call(f.new_call(callee, &args, cc)),
            K::Phi(inc) => {
                let inc: Vec<_> = inc.into_iter().map(|(v, b)| (v, BlockId(b))).collect();
                InstKind::Phi {
                    incoming: f.new_phi(&inc),
                }
            }
        }
    }
}

impl F {
    fn p(&self, k: u32) -> ValueId {
        ValueId(self.f.base + k)
    }
    fn c(&self, k: u32) -> ValueId {
        ValueId(self.f.first_const() + k)
    }
    /// Starts a new basic block.
    fn block(&mut self) {
        self.f.block_starts.push(self.f.insts.len() as u32);
    }
    fn push(&mut self, kind: impl Into<K>, ty: TypeId, result: u32) {
        let kind = kind.into().into_kind(&mut self.f);
        self.f.inst_bits.push(32 * (self.f.insts.len() as u32 + 1));
        self.f.insts.push(Inst {
            kind,
            ty,
            result: ValueId(result),
        });
    }
    /// An instruction with a result of type `ty`.
    fn val(&mut self, kind: impl Into<K>, ty: TypeId) -> ValueId {
        let v = self.f.first_inst_value() + self.f.value_insts.len() as u32;
        self.f.value_insts.push(self.f.insts.len() as u32);
        self.push(kind, ty, v);
        ValueId(v)
    }
    /// `load ty, ptr, align`.
    fn load(&mut self, ptr: ValueId, align: u32, ty: TypeId) -> ValueId {
        let align = Align(align);
        self.val(InstKind::Load { ptr, align }, ty)
    }
    /// `store val, ptr, align`.
    fn store(&mut self, ptr: ValueId, val: ValueId, align: u32) {
        let align = Align(align);
        self.op(InstKind::Store { ptr, val, align });
    }
    /// An instruction without a result.
    fn op(&mut self, kind: impl Into<K>) {
        let void = self.void;
        self.push(kind, void, ValueId::NONE.0);
    }
    fn ret(&mut self) {
        self.op(InstKind::Ret { val: None });
    }
    fn ret_val(&mut self, v: ValueId) {
        self.op(InstKind::Ret { val: Some(v) });
    }
}

/// Makes a type in a builder.
type TyFn = fn(&mut B) -> TypeId;

/// Fills a body in a builder.
type BodyFn = fn(&mut F);

fn int(x: u64) -> ConstValue {
    ConstValue::Int(x)
}

fn bin(op: BinOp, lhs: ValueId, rhs: ValueId) -> InstKind {
    InstKind::Binop {
        op,
        lhs,
        rhs,
        flags: None,
    }
}

fn call(func: u32, args: Vec<ValueId>) -> K {
    K::Call(Callee::Direct(FuncId(func)), args, 0)
}

/// `_start(i32 %p0)` with the given constants, whose single block is filled by `body`
/// (a `ret void` is appended).
fn start_with(
    consts: impl FnOnce(&mut B) -> Vec<(TypeId, ConstValue)>,
    body: impl FnOnce(&mut F),
) -> Module {
    let mut b = B::new();
    let s = b.start();
    let cs = consts(&mut b);
    let mut f = b.body(s, &cs);
    f.block();
    body(&mut f);
    f.ret();
    b.finish(f);
    b.build()
}

/// The smallest clean module: `_start` returns.
fn minimal() -> Module {
    start_with(|_| vec![], |_| {})
}

// ---------------------------------------------------------------------------------------
// Assertions.

fn show(fs: &[Finding]) -> String {
    fs.iter()
        .map(|f| format!("  [{}] {f}", f.rule))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every finding is of `rule`, and one of them mentions `text`.
#[track_caller]
fn expect_only(m: &Module, rule: Rule, text: &str) -> Vec<Finding> {
    if let Some(why) = misfit(m, rule, text, true) {
        panic!("{why}");
    }
    verify(m)
}

/// Some finding is of `rule` and mentions `text` (others may accompany it).
#[track_caller]
fn expect(m: &Module, rule: Rule, text: &str) {
    if let Some(why) = misfit(m, rule, text, false) {
        panic!("{why}");
    }
}

/// What is wrong with the findings of `m` (`None` when they are as expected): no finding
/// of `rule` mentions `text`, or (with `only`) one is of another rule.
fn misfit(m: &Module, rule: Rule, text: &str, only: bool) -> Option<String> {
    let fs = verify(m);
    if !fs
        .iter()
        .any(|f| f.rule == rule && f.message.contains(text))
    {
        return Some(format!(
            "expected a {rule} finding containing {text:?}, got:\n{}",
            show(&fs)
        ));
    }
    if only && !fs.iter().all(|f| f.rule == rule) {
        return Some(format!(
            "expected only {rule} findings, got:\n{}",
            show(&fs)
        ));
    }
    None
}

#[track_caller]
fn expect_clean(m: &Module) {
    let fs = verify(m);
    assert!(fs.is_empty(), "expected no findings, got:\n{}", show(&fs));
}

// ---------------------------------------------------------------------------------------
// Baselines and output format.

#[test]
fn minimal_module_is_clean_and_runnable() {
    let m = minimal();
    expect_clean(&m);
    assert_eq!(check_runnable(&m), Ok(FuncId(0)));
}

#[test]
fn finding_display_is_one_line_with_position_and_context() {
    let m = start_with(
        |b| {
            let i1 = b.int(1);
            vec![(i1, int(0))]
        },
        |f| {
            let (p, c) = (f.p(0), f.c(0));
            f.store(p, c, 1);
        },
    );
    let fs = expect_only(&m, Rule::Memory, "store of i1 is not allowed");
    let f = &fs[0];
    // Function @f0's body starts at bit 10000; the store is its first record (+32).
    assert_eq!(f.position.bit, 10_032);
    assert_eq!(
        f.context,
        Context::Instruction {
            function: 0,
            name: Some("_start".into()),
            inst: 0
        }
    );
    assert_eq!(
        f.to_string(),
        "bit 10032 (byte 1254:0): function @f0 (\"_start\"), instruction 0: \
         store of i1 is not allowed"
    );
}

// ---------------------------------------------------------------------------------------
// Module-level rules.

/// One edit of [`minimal`] and what the verifier must say of it: some finding of `rule`
/// containing each of `texts`, and with `only`, no finding of another rule.
struct Edit {
    name: &'static str,
    edit: fn(&mut Module),
    rule: Rule,
    texts: &'static [&'static str],
    only: bool,
}

/// Module-level and structural rules, each broken by one edit of a clean module.
#[test]
fn one_edit_of_a_clean_module_breaks_one_rule() {
    #[rustfmt::skip]
    let edits = [
        Edit { name: "version 2", edit: |m| m.version = 2,
            rule: Rule::ModuleVersion, texts: &["version is 2"], only: true },
        Edit { name: "an undeclared type", edit: |m| { m.types.intern(Type::Int(1)); },
            rule: Rule::UndeclaredType, texts: &["i1 is used but not declared"], only: true },
        Edit { name: "calling convention 1", edit: |m| m.functions[0].cc = 1,
            rule: Rule::CallingConv, texts: &["calling convention 1"], only: true },
        Edit { name: "linkage 5", edit: |m| m.functions[0].linkage = Linkage::Other(5),
            rule: Rule::Linkage, texts: &["linkage code 5"], only: true },
        Edit { name: "a body of no function", edit: |m| m.function_bodies[0].decl = FuncId(7),
            rule: Rule::Structure, texts: &["defines @f7 but only 1 functions exist"], only: false },
        Edit { name: "a definition without body", edit: |m| m.functions[0].body = None,
            rule: Rule::Structure,
            texts: &["defined function has no body", "body 0 is not the body of @f0"], only: false },
        Edit { name: "a declaration with a body", edit: |m| m.functions[0].is_proto = true,
            rule: Rule::Structure, texts: &["declared function has a body"], only: false },
        Edit { name: "a body index past the end", edit: |m| m.functions[0].body = Some(3),
            rule: Rule::Structure, texts: &["body index 3 does not belong to this function"],
            only: false },
        Edit { name: "a function of type i32",
            edit: |m| m.functions[0].ty = m.types.find(&Type::Int(32)).unwrap(),
            rule: Rule::Structure, texts: &["type i32 is not a function type"], only: true },
        Edit { name: "parameter ids from 3", edit: |m| m.function_bodies[0].base = 3,
            rule: Rule::Structure, texts: &["first parameter id is 3"], only: true },
        Edit { name: "two parameters in the body", edit: |m| m.function_bodies[0].num_params = 2,
            rule: Rule::Structure, texts: &["body has 2 parameters"], only: true },
        Edit { name: "two blocks declared", edit: |m| m.function_bodies[0].num_blocks = 2,
            rule: Rule::Cfg, texts: &["2 basic blocks declared but 1 defined"], only: true },
        Edit { name: "no blocks",
            edit: |m| {
                m.function_bodies[0].num_blocks = 0;
                m.function_bodies[0].block_starts.clear();
            },
            rule: Rule::Cfg, texts: &["declares 0 basic blocks"], only: true },
    ];
    let mut wrong = Vec::new();
    for e in &edits {
        let mut m = minimal();
        (e.edit)(&mut m);
        for text in e.texts {
            if let Some(why) = misfit(&m, e.rule, text, e.only) {
                wrong.push(format!("{}: {why}", e.name));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn integer_widths_are_restricted() {
    let mut m = minimal();
    m.types.push_declared(Type::Int(7));
    let fs = expect_only(&m, Rule::Type, "i7 is not allowed");
    assert!(matches!(fs[0].context, Context::Type { .. }));
}

#[test]
fn vector_shapes_are_restricted() {
    for (len, w) in [(3u32, 32u32), (2, 64), (8, 8), (4, 16), (2, 1)] {
        let mut b = B::new();
        let s = b.start();
        let e = b.int(w);
        b.vec(len, e);
        b.empty_body(s);
        expect_only(
            &b.build(),
            Rule::Type,
            &format!("<{len} x i{w}> is not allowed"),
        );
    }
    // The allowed shapes are clean.
    let mut b = B::new();
    let s = b.start();
    for (len, w) in [(16u32, 8u32), (8, 16), (4, 32), (4, 1), (8, 1), (16, 1)] {
        let e = b.int(w);
        b.vec(len, e);
    }
    let fl = b.float();
    b.vec(4, fl);
    b.empty_body(s);
    expect_clean(&b.build());
}

#[test]
fn function_types_must_have_value_type_members() {
    let mut m = minimal();
    let void = m.types.find(&Type::Void).unwrap();
    m.types.push_declared(Type::Function(FunctionType {
        vararg: false,
        ret: void,
        params: vec![void],
    }));
    expect_only(&m, Rule::Type, "has a parameter of type void");
    let mut m = minimal();
    let i32t = m.types.find(&Type::Int(32)).unwrap();
    let bad = m.types.push_declared(Type::Vector { len: 3, elem: i32t });
    m.types.push_declared(Type::Function(FunctionType {
        vararg: false,
        ret: bad,
        params: vec![],
    }));
    expect(
        &m,
        Rule::Type,
        "returns <3 x i32>, which is not a value type",
    );
}

#[test]
fn vararg_function_types_are_rejected() {
    let mut m = minimal();
    let void = m.types.find(&Type::Void).unwrap();
    let t = m.types.push_declared(Type::Function(FunctionType {
        vararg: true,
        ret: void,
        params: vec![],
    }));
    expect_only(&m, Rule::Type, "is vararg");
    // On a function it is also a signature finding.
    m.functions[0].ty = t;
    m.function_bodies[0].num_params = 0;
    expect(&m, Rule::FunctionSignature, "is vararg");
}

#[test]
fn nested_composite_types_stop_verification_without_panicking() {
    let mut m = minimal();
    // A vector whose element is itself, and a function returning itself.
    let n = m.types.len() as u32;
    m.types.push_declared(Type::Vector {
        len: 4,
        elem: TypeId(n),
    });
    m.types.push_declared(Type::Function(FunctionType {
        vararg: false,
        ret: TypeId(n + 1),
        params: vec![],
    }));
    let fs = expect_only(&m, Rule::Type, "composite type");
    assert_eq!(fs.len(), 2);
    assert!(check_runnable(&m).is_err());
}

/// `_start` calls `void @g()` once (`make` builds the call from `g`'s id), then returns;
/// `edit` may change `_start`'s body before it is finished.
fn start_calls_void_g(make: impl FnOnce(u32) -> K, edit: impl FnOnce(&mut F)) -> Module {
    let mut b = B::new();
    let s = b.start();
    let void = b.void();
    let g = b.define("g", void, &[]);
    let mut f = b.body(s, &[]);
    f.block();
    f.op(make(g));
    edit(&mut f);
    f.ret();
    b.finish(f);
    b.empty_body(g);
    b.build()
}

#[test]
fn calling_convention_must_be_c_on_calls() {
    // cc 1 (fastcc), tail
    let m = start_calls_void_g(
        |g| K::Call(Callee::Direct(FuncId(g)), vec![], 2 | 1),
        |_| {},
    );
    expect_only(&m, Rule::CallingConv, "calling convention 1");
}

/// A body built by hand can name an operand list outside its pool (the decoder never
/// does): the verifier reports it instead of reading the list as empty.
#[test]
fn operand_lists_must_lie_in_their_pools() {
    for past_the_end in [false, true] {
        let m = start_calls_void_g(
            |g| call(g, vec![]),
            |f| {
                if past_the_end {
                    // A list of one argument where the pool holds none: `g` takes none,
                    // so only the pool rule can catch it.
                    if let InstKind::Call(c) = &mut f.f.insts[0].kind {
                        c.args.len = 1;
                    }
                }
            },
        );
        if past_the_end {
            expect_only(
                &m,
                Rule::Call,
                "call's argument list (entries 0 to 1) lies outside",
            );
        } else {
            expect_clean(&m);
        }
    }
    // A phi's incoming list outside the pool.
    let m = diamond(|f| vec![(f.c(1), 0), (f.c(1), 1)]);
    let mut broken = m.clone();
    for inst in &mut broken.function_bodies[0].insts {
        if let InstKind::Phi { incoming } = &mut inst.kind {
            incoming.start = 7;
        }
    }
    expect_clean(&m);
    expect(
        &broken,
        Rule::Phi,
        "phi's incoming list (entries 7 to 9) lies outside",
    );
}

#[test]
fn intrinsic_declarations_must_be_external() {
    let mut b = B::new();
    let s = b.start();
    let void = b.void();
    let t = b.declare("llvm.trap", void, &[]);
    let mut f = b.body(s, &[]);
    f.block();
    f.op(call(t, vec![]));
    f.ret();
    b.finish(f);
    let mut m = b.build();
    expect_clean(&m);
    m.functions[t as usize].linkage = Linkage::Internal;
    expect_only(&m, Rule::Linkage, "declarations must be external");
}

#[test]
fn only_one_external_definition() {
    let mut b = B::new();
    let s = b.start();
    let void = b.void();
    let g = b.define("g", void, &[]);
    for d in [s, g] {
        b.empty_body(d);
    }
    let mut m = b.build();
    expect_clean(&m);
    m.functions[g as usize].linkage = Linkage::External;
    expect_only(&m, Rule::EntryPoints, "second external definition");
}

#[test]
fn ordinary_function_signatures_use_i32_i64_float_double_vectors() {
    for w in [1u32, 8, 16] {
        let mut b = B::new();
        let s = b.start();
        let n = b.int(w);
        let void = b.void();
        let g = b.define("g", void, &[n]);
        for d in [s, g] {
            b.empty_body(d);
        }
        expect_only(
            &b.build(),
            Rule::FunctionSignature,
            &format!("parameter 0 has type i{w}"),
        );
    }
    let mut b = B::new();
    let s = b.start();
    let i8t = b.int(8);
    let g = b.define("g", i8t, &[]);
    b.empty_body(s);
    let mut f = b.body(g, &[(i8t, int(0))]);
    f.block();
    let c = f.c(0);
    f.ret_val(c);
    b.finish(f);
    expect_only(&b.build(), Rule::FunctionSignature, "return type i8");
}

#[test]
fn declared_functions_must_be_intrinsics() {
    let mut b = B::new();
    let s = b.start();
    let void = b.void();
    b.declare("puts", void, &[]);
    b.empty_body(s);
    expect_only(
        &b.build(),
        Rule::UndefinedFunction,
        "declared but not defined",
    );
}

#[test]
fn unknown_intrinsics_are_rejected() {
    let mut b = B::new();
    let s = b.start();
    let (void, i32t) = (b.void(), b.i32());
    for (name, ret, params) in [
        ("llvm.foo", void, vec![]),
        ("llvm.ctlz.i16", i32t, vec![i32t]),
        ("llvm.nacl.atomic.rmw.i1", i32t, vec![]),
        ("llvm.frameaddress", i32t, vec![i32t]),
    ] {
        b.declare(name, ret, &params);
    }
    b.empty_body(s);
    let fs = expect_only(&b.build(), Rule::Intrinsic, "llvm.foo is not an allowed");
    assert_eq!(fs.len(), 4, "{}", show(&fs));
}

#[test]
fn intrinsic_signatures_must_match_exactly() {
    let mut b = B::new();
    let s = b.start();
    let (void, i32t) = (b.void(), b.i32());
    // memcpy takes (i32, i32, i32, i32, i1); this one has an i32 flag.
    b.declare(
        "llvm.memcpy.p0i8.p0i8.i32",
        void,
        &[i32t, i32t, i32t, i32t, i32t],
    );
    b.empty_body(s);
    expect_only(
        &b.build(),
        Rule::Intrinsic,
        "llvm.memcpy.p0i8.p0i8.i32 has type void (i32, i32, i32, i32, i32), but PNaCl \
         requires void (i32, i32, i32, i32, i1)",
    );

    let mut b = B::new();
    let s = b.start();
    let (void, i32t, i8t, i1) = (b.void(), b.i32(), b.int(8), b.int(1));
    b.declare("llvm.memset.p0i8.i32", void, &[i32t, i8t, i32t, i32t, i1]);
    b.declare("llvm.sqrt.f64", i32t, &[i32t]);
    b.empty_body(s);
    let fs = expect_only(
        &b.build(),
        Rule::Intrinsic,
        "llvm.sqrt.f64 has type i32 (i32)",
    );
    assert_eq!(fs.len(), 1, "{}", show(&fs));
}

#[test]
fn intrinsics_cannot_be_defined() {
    let mut b = B::new();
    let s = b.start();
    let void = b.void();
    let t = b.define("llvm.trap", void, &[]);
    for d in [s, t] {
        b.empty_body(d);
    }
    expect_only(
        &b.build(),
        Rule::Intrinsic,
        "intrinsics may only be declared",
    );
}

// ---------------------------------------------------------------------------------------
// Globals.

#[test]
fn global_alignment_is_limited() {
    let mut b = B::new();
    let s = b.start();
    b.global(Initializer::Simple(Element::Zerofill(4)), 30); // 2^29: fine
    b.global(Initializer::Simple(Element::Zerofill(4)), 31);
    b.empty_body(s);
    let fs = expect_only(&b.build(), Rule::GlobalAlign, "2^30 is larger");
    assert_eq!(fs.len(), 1);
    assert_eq!(fs[0].position.bit, 5010);
    assert!(matches!(fs[0].context, Context::Global { index: 1, .. }));
}

#[test]
fn relocations_must_name_a_function_or_global() {
    let mut b = B::new();
    let s = b.start();
    // Ids: @f0 = 0, @g0 = 1, @g1 = 2; 3 names nothing.
    b.global(
        Initializer::Simple(Element::Reloc {
            target: 0,
            addend: None,
        }),
        1,
    );
    b.global(
        Initializer::Compound(vec![
            Element::Reloc {
                target: 2,
                addend: Some(4),
            },
            Element::Reloc {
                target: 3,
                addend: None,
            },
        ]),
        1,
    );
    b.empty_body(s);
    expect_only(&b.build(), Rule::GlobalInit, "relocation target 3");
}

#[test]
fn relocations_cannot_take_the_address_of_an_intrinsic() {
    let mut b = B::new();
    let s = b.start();
    let void = b.void();
    let t = b.declare("llvm.trap", void, &[]);
    b.global(
        Initializer::Simple(Element::Reloc {
            target: t,
            addend: None,
        }),
        1,
    );
    b.empty_body(s);
    expect_only(&b.build(), Rule::GlobalInit, "address of intrinsic @f1");
}

#[test]
fn compound_initializers_have_two_or_more_elements() {
    let mut b = B::new();
    let s = b.start();
    b.global(Initializer::Compound(vec![Element::Data(vec![1, 2])]), 1);
    b.empty_body(s);
    expect_only(
        &b.build(),
        Rule::GlobalInit,
        "compound initializer with 1 element",
    );
}

// ---------------------------------------------------------------------------------------
// IR consistency (hand-built modules only).

#[test]
fn the_instruction_value_table_must_match_the_body() {
    let mut m = start_with(
        |b| vec![(b.i32(), int(1))],
        |f| {
            let (p, c) = (f.p(0), f.c(0));
            f.val(bin(BinOp::Add, p, c), TypeId(1));
        },
    );
    m.function_bodies[0].value_insts = vec![5];
    expect_only(&m, Rule::Structure, "instruction value table");
}

#[test]
fn forward_declarations_match_the_value_type() {
    let build = |decl_ty: fn(&mut B) -> TypeId| {
        let mut b = B::new();
        let s = b.start();
        let i32t = b.i32();
        let t = decl_ty(&mut b);
        let mut f = b.body(s, &[(i32t, int(1))]);
        let v0 = ValueId(f.f.first_inst_value());
        f.f.forward_decls.push((v0, t));
        f.block();
        let (p, c) = (f.p(0), f.c(0));
        f.val(bin(BinOp::Add, p, c), i32t);
        f.ret();
        b.finish(f);
        b.build()
    };
    expect_clean(&build(B::i32));
    expect_only(
        &build(|b| b.int(64)),
        Rule::Structure,
        "forward declaration of %v0 as i64, but it is i32",
    );
}

// ---------------------------------------------------------------------------------------
// Constants and operands.

#[test]
fn vector_constants_must_be_undef() {
    let m = start_with(
        |b| {
            let i32t = b.i32();
            let v = b.vec(4, i32t);
            vec![(v, ConstValue::Undef), (v, int(0))]
        },
        |_| {},
    );
    expect_only(&m, Rule::Constant, "vector constants other than undef");
}

#[test]
fn integer_constants_must_fit_their_type() {
    let m = start_with(|b| vec![(b.int(8), int(0x100))], |_| {});
    expect_only(&m, Rule::Constant, "does not fit i8");
}

#[test]
fn constant_kinds_must_match_their_type() {
    let m = start_with(|b| vec![(b.i32(), ConstValue::Float(0))], |_| {});
    expect_only(&m, Rule::Constant, "constant %c0 of type i32");
    let m = start_with(|b| vec![(b.float(), ConstValue::Float(1 << 40))], |_| {});
    expect_only(&m, Rule::Constant, "exceed 32 bits");
}

#[test]
fn operands_must_name_values() {
    let m = start_with(
        |_| vec![],
        |f| {
            let p = f.p(0);
            f.store(p, ValueId(999), 1);
        },
    );
    expect_only(&m, Rule::Operand, "names no value");
}

#[test]
fn intrinsic_addresses_cannot_be_used_as_values() {
    let mut b = B::new();
    let s = b.start();
    let void = b.void();
    let t = b.declare("llvm.trap", void, &[]);
    let mut f = b.body(s, &[]);
    f.block();
    let p = f.p(0);
    f.store(p, ValueId(t), 1);
    f.ret();
    b.finish(f);
    expect_only(&b.build(), Rule::Operand, "address of intrinsic @f1");
}

// ---------------------------------------------------------------------------------------
// CFG.

/// `_start` with `n` blocks filled by `body`; nothing is appended.
fn blocks(
    consts: impl FnOnce(&mut B) -> Vec<(TypeId, ConstValue)>,
    body: impl FnOnce(&mut F, TypeId),
) -> Module {
    let mut b = B::new();
    let s = b.start();
    let cs = consts(&mut b);
    let i32t = b.i32();
    b.int(1);
    let mut f = b.body(s, &cs);
    body(&mut f, i32t);
    b.finish(f);
    b.build()
}

fn br(target: u32) -> InstKind {
    InstKind::Br {
        target: BlockId(target),
    }
}

/// `_start` whose blocks hold these instructions (none with a result) and nothing else.
fn blocks_of(code: &[&[InstKind]]) -> Module {
    blocks(
        |_| vec![],
        |f, _| {
            for insts in code {
                f.block();
                for k in insts.iter() {
                    f.op(k.clone());
                }
            }
        },
    )
}

#[test]
fn branches_and_terminators_follow_the_cfg_rules() {
    let ret = || InstKind::Ret { val: None };
    expect_clean(&blocks_of(&[&[br(1)], &[InstKind::Unreachable]]));
    let cases: [(&str, &[&[InstKind]], &str); 3] = [
        (
            "a terminator in the middle of a block",
            &[&[br(1)], &[ret(), ret()]],
            "terminator in the middle of block %b1",
        ),
        (
            "a branch past the last block",
            &[&[br(5)]],
            "branch target %b5 is out of range",
        ),
        (
            "a branch to the entry",
            &[&[br(1)], &[br(0)]],
            "branch to the entry block",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(name, code, text)| {
            misfit(&blocks_of(code), Rule::Cfg, text, true).map(|why| format!("{name}: {why}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A block without a terminator.
    let m = blocks(
        |b| vec![(b.i32(), int(1))],
        |f, i32t| {
            f.block();
            let (p, c) = (f.p(0), f.c(0));
            f.val(bin(BinOp::Add, p, c), i32t);
            f.block();
            f.ret();
        },
    );
    expect_only(&m, Rule::Cfg, "block %b0 does not end with a terminator");
}

#[test]
fn block_ranges_must_be_valid() {
    let mut m = blocks_of(&[&[br(1)], &[InstKind::Ret { val: None }]]);
    m.function_bodies[0].block_starts[1] = 0;
    expect_only(&m, Rule::Cfg, "empty or its instruction range is invalid");
}

// ---------------------------------------------------------------------------------------
// Phis.

/// b0: br i1 %c0, b1, b2; b1: `arm`; br b2; b2: `merge`; ret. Constants: %c0 i1 and
/// %c1 i32; `arm` and `merge` are given the i32 type.
fn branching(arm: impl FnOnce(&mut F, TypeId), merge: impl FnOnce(&mut F, TypeId)) -> Module {
    blocks(
        |b| vec![(b.int(1), int(1)), (b.i32(), int(7))],
        |f, i32t| {
            f.block();
            let c = f.c(0);
            f.op(InstKind::CondBr {
                cond: c,
                then_bb: BlockId(1),
                else_bb: BlockId(2),
            });
            f.block();
            arm(f, i32t);
            f.op(br(2));
            f.block();
            merge(f, i32t);
            f.ret();
        },
    )
}

/// [`branching`] with an empty arm and a phi in b2, whose incoming list `phi` builds.
fn diamond(phi: impl FnOnce(&F) -> Vec<(ValueId, u32)>) -> Module {
    branching(
        |_, _| {},
        |f, i32t| {
            let inc = phi(f);
            f.val(K::Phi(inc), i32t);
        },
    )
}

#[test]
fn phi_incoming_blocks_are_the_predecessors() {
    expect_clean(&diamond(|f| vec![(f.c(1), 0), (f.p(0), 1)]));
    expect_only(
        &diamond(|f| vec![(f.c(1), 0)]),
        Rule::Phi,
        "no incoming value for predecessor %b1",
    );
    expect_only(
        &diamond(|f| vec![(f.c(1), 0), (f.p(0), 1), (f.p(0), 2)]),
        Rule::Phi,
        "incoming block %b2 is not a predecessor of %b2",
    );
    expect_only(
        &diamond(|f| vec![(f.c(1), 0), (f.p(0), 1), (f.p(0), 9)]),
        Rule::Phi,
        "incoming block %b9 is out of range",
    );
}

#[test]
fn phi_lists_one_entry_per_edge_with_one_value() {
    // A switch with two edges to b1 (default and one case) and one case to b2.
    let m = |phi: &dyn Fn(&F) -> Vec<(ValueId, u32)>| {
        blocks(
            |b| vec![(b.i32(), int(7))],
            |f, i32t| {
                f.block();
                let p = f.p(0);
                f.op(InstKind::Switch(Box::new(Switch {
                    cond: p,
                    default: BlockId(1),
                    cases: vec![
                        SwitchCase {
                            value: 1,
                            target: BlockId(1),
                        },
                        SwitchCase {
                            value: 2,
                            target: BlockId(2),
                        },
                    ],
                })));
                f.block();
                let inc = phi(f);
                f.val(K::Phi(inc), i32t);
                f.ret();
                f.block();
                f.ret();
            },
        )
    };
    expect_clean(&m(&|f| vec![(f.c(0), 0), (f.c(0), 0)]));
    expect_only(
        &m(&|f| vec![(f.c(0), 0)]),
        Rule::Phi,
        "incoming block %b0 is listed 1 times but has 2 edges",
    );
    expect_only(
        &m(&|f| vec![(f.c(0), 0), (f.c(0), 0), (f.c(0), 0)]),
        Rule::Phi,
        "listed 3 times but has 2 edges",
    );
    expect_only(
        &m(&|f| vec![(f.c(0), 0), (f.p(0), 0)]),
        Rule::Phi,
        "listed with different values",
    );
}

#[test]
fn phis_come_first_and_never_in_the_entry_block() {
    let m = blocks(
        |b| vec![(b.i32(), int(7))],
        |f, i32t| {
            f.block();
            let c = f.c(0);
            f.val(K::Phi(vec![(c, 0)]), i32t);
            f.ret();
        },
    );
    expect_only(&m, Rule::Phi, "phi in the entry block");
    let m = blocks(
        |b| vec![(b.i32(), int(7))],
        |f, i32t| {
            f.block();
            f.op(br(1));
            f.block();
            let (p, c) = (f.p(0), f.c(0));
            f.val(bin(BinOp::Add, p, c), i32t);
            f.val(K::Phi(vec![(c, 0)]), i32t);
            f.ret();
        },
    );
    expect_only(&m, Rule::Phi, "phi after a non-phi instruction");
}

#[test]
fn phi_incoming_values_have_the_phi_type() {
    let m = diamond(|f| vec![(f.c(1), 0), (f.c(0), 1)]);
    expect_only(
        &m,
        Rule::Phi,
        "phi of type i32 has an incoming value of type i1",
    );
}

// ---------------------------------------------------------------------------------------
// Dominance.

#[test]
fn uses_must_follow_definitions_in_a_block() {
    let m = blocks(
        |b| vec![(b.i32(), int(7))],
        |f, i32t| {
            f.block();
            let (p, c) = (f.p(0), f.c(0));
            // %v0 = add %v1, %c0 ; %v1 = add %p0, %c0
            let later = ValueId(f.f.first_inst_value() + 1);
            f.val(bin(BinOp::Add, later, c), i32t);
            f.val(bin(BinOp::Add, p, c), i32t);
            f.ret();
        },
    );
    expect_only(&m, Rule::Dominance, "use of %v1 is not dominated");
}

#[test]
fn uses_must_be_dominated_across_blocks() {
    // b0: condbr b1, b2; b1: %v0 = add; br b2; b2: use %v0 -> not dominated (b0->b2).
    let m = branching(
        |f, i32t| {
            let (p, k) = (f.p(0), f.c(1));
            f.val(bin(BinOp::Add, p, k), i32t);
        },
        |f, i32t| {
            let (v, k) = (ValueId(f.f.first_inst_value()), f.c(1));
            f.val(bin(BinOp::Add, v, k), i32t);
        },
    );
    expect_only(&m, Rule::Dominance, "use of %v0 is not dominated");
}

#[test]
fn phi_values_must_dominate_their_incoming_edge() {
    // Loop: b0: br b1; b1: %v0 = phi [%c1, b0], [%v1, b2]; condbr b2, b3;
    // b2: %v1 = add %v0; br b1; b3: ret. Clean. Then feed b0's edge with %v1: not
    // dominated (b2 does not dominate b0).
    let m = |bad: bool| {
        blocks(
            |b| vec![(b.int(1), int(1)), (b.i32(), int(7))],
            |f, i32t| {
                let v0 = ValueId(f.f.first_inst_value());
                let v1 = ValueId(f.f.first_inst_value() + 1);
                f.block();
                f.op(br(1));
                f.block();
                let first = if bad { v1 } else { f.c(1) };
                f.val(K::Phi(vec![(first, 0), (v1, 2)]), i32t);
                let c = f.c(0);
                f.op(InstKind::CondBr {
                    cond: c,
                    then_bb: BlockId(2),
                    else_bb: BlockId(3),
                });
                f.block();
                let k = f.c(1);
                f.val(bin(BinOp::Add, v0, k), i32t);
                f.op(br(1));
                f.block();
                f.ret();
            },
        )
    };
    expect_clean(&m(false));
    expect_only(
        &m(true),
        Rule::Dominance,
        "%v1 does not dominate the end of incoming block %b0",
    );
}

/// Dominance on random control flow graphs, against its definition: block `d`
/// dominates block `u` when every path from the entry to `u` passes `d`. Each block
/// defines a value and then uses the value of some block; the verifier must report
/// exactly the uses whose definition does not dominate them, in order (uses in
/// unreachable blocks are not checked). The graphs have loops entered at a block laid out
/// later, blocks reached only from later ones and unreachable blocks, so each of the
/// verifier's ways of building the dominator tree is compared with the definition.
#[test]
fn dominance_matches_its_definition_on_random_graphs() {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    // Blocks reachable from the entry without passing `skip`.
    fn reach(succs: &[Vec<usize>], skip: Option<usize>) -> Vec<bool> {
        let mut seen = vec![false; succs.len()];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(b) = stack.pop() {
            for &t in &succs[b] {
                if !seen[t] && Some(t) != skip {
                    seen[t] = true;
                    stack.push(t);
                }
            }
        }
        seen
    }
    let mut cross_block_uses = 0;
    for _ in 0..20000 {
        let n = 2 + next(14);
        // Targets are never the entry block.
        let succs: Vec<Vec<usize>> = (0..n)
            .map(|_| match next(6) {
                0 => vec![],
                1 | 2 => vec![1 + next(n - 1)],
                _ => vec![1 + next(n - 1), 1 + next(n - 1)],
            })
            .collect();
        let used: Vec<usize> = (0..n).map(|_| next(n)).collect();
        let m = blocks(
            |b| vec![(b.int(1), int(1)), (b.i32(), int(7))],
            |f, i32t| {
                let first = f.f.first_inst_value();
                for b in 0..n {
                    f.block();
                    let (p, k) = (f.p(0), f.c(1));
                    // Block b defines %v(2b) and uses %v(2 used[b]).
                    f.val(bin(BinOp::Add, p, k), i32t);
                    f.val(
                        bin(BinOp::Add, ValueId(first + 2 * used[b] as u32), k),
                        i32t,
                    );
                    let c = f.c(0);
                    match succs[b][..] {
                        [] => f.ret(),
                        [t] => f.op(br(t as u32)),
                        [t, e] => f.op(InstKind::CondBr {
                            cond: c,
                            then_bb: BlockId(t as u32),
                            else_bb: BlockId(e as u32),
                        }),
                        _ => unreachable!(),
                    }
                }
            },
        );
        let reachable = reach(&succs, None);
        let expected: Vec<String> = (0..n)
            .filter(|&b| reachable[b] && used[b] != b)
            .filter(|&b| {
                cross_block_uses += 1;
                let d = used[b];
                d != 0 && reach(&succs, Some(d))[b]
            })
            .map(|b| {
                format!(
                    "use of %v{} is not dominated by its definition",
                    2 * used[b]
                )
            })
            .collect();
        let found: Vec<String> = verify(&m)
            .into_iter()
            .map(|f| {
                assert_eq!(f.rule, Rule::Dominance, "{f} (graph {succs:?})");
                f.message
            })
            .collect();
        assert_eq!(found, expected, "graph {succs:?}, uses {used:?}");
    }
    // The graphs do exercise the rule.
    assert!(cross_block_uses > 1000, "{cross_block_uses}");
}

// ---------------------------------------------------------------------------------------
// Arithmetic.

/// One instruction over `%c0`, `%c1` (of `a`, `b`) in `_start`, result of type `rt`.
fn with_consts(
    tys: impl FnOnce(&mut B) -> (Vec<(TypeId, ConstValue)>, TypeId),
    kind: impl FnOnce(&F) -> InstKind,
) -> Module {
    let mut b = B::new();
    let s = b.start();
    let (cs, rt) = tys(&mut b);
    let mut f = b.body(s, &cs);
    f.block();
    let k = kind(&f);
    f.val(k, rt);
    f.ret();
    b.finish(f);
    b.build()
}

fn two(op: BinOp) -> impl FnOnce(&F) -> InstKind {
    move |f: &F| bin(op, f.c(0), f.c(1))
}

#[test]
fn arithmetic_on_i1_is_not_allowed() {
    let i1s = |b: &mut B| {
        let t = b.int(1);
        (vec![(t, int(1)), (t, int(0))], t)
    };
    for op in [BinOp::And, BinOp::Or, BinOp::Xor] {
        expect_clean(&with_consts(i1s, two(op)));
    }
    for op in [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::UDiv,
        BinOp::SDiv,
        BinOp::URem,
        BinOp::SRem,
        BinOp::Shl,
        BinOp::LShr,
        BinOp::AShr,
    ] {
        expect_only(
            &with_consts(i1s, two(op)),
            Rule::Arithmetic,
            &format!("{} on i1 is not allowed", op.name()),
        );
    }
}

#[test]
fn arithmetic_on_i1_vectors_is_not_allowed() {
    let m = start_with(
        |b| {
            let i1 = b.int(1);
            let v = b.vec(4, i1);
            vec![(v, ConstValue::Undef)]
        },
        |f| {
            let c = f.c(0);
            let t = f.f.consts[0].ty;
            f.val(bin(BinOp::Add, c, c), t);
        },
    );
    expect_only(&m, Rule::Arithmetic, "add on <4 x i1> is not allowed");
}

#[test]
fn float_and_integer_operators_match_their_operands() {
    let ints = |b: &mut B| {
        let t = b.i32();
        (vec![(t, int(1)), (t, int(2))], t)
    };
    let floats = |b: &mut B| {
        let t = b.float();
        (
            vec![(t, ConstValue::Float(0)), (t, ConstValue::Float(0))],
            t,
        )
    };
    expect_clean(&with_consts(ints, two(BinOp::Add)));
    expect_clean(&with_consts(floats, two(BinOp::FAdd)));
    expect_only(
        &with_consts(ints, two(BinOp::FMul)),
        Rule::Arithmetic,
        "fmul is not allowed on i32",
    );
    expect_only(
        &with_consts(floats, two(BinOp::Xor)),
        Rule::Arithmetic,
        "xor is not allowed on float",
    );
}

#[test]
fn binary_operand_and_result_types_agree() {
    let mixed = |b: &mut B| {
        let (a, c) = (b.i32(), b.int(64));
        (vec![(a, int(1)), (c, int(2))], a)
    };
    expect_only(
        &with_consts(mixed, two(BinOp::Add)),
        Rule::Arithmetic,
        "operand types differ",
    );
    let wrong_result = |b: &mut B| {
        let (a, c) = (b.i32(), b.int(64));
        (vec![(a, int(1)), (a, int(2))], c)
    };
    expect_only(
        &with_consts(wrong_result, two(BinOp::Add)),
        Rule::Arithmetic,
        "add of i32 has result type i64",
    );
}

#[test]
fn nsw_nuw_exact_flags_are_not_allowed() {
    let ints = |b: &mut B| {
        let t = b.i32();
        (vec![(t, int(1)), (t, int(2))], t)
    };
    let flagged = |fl: u32| {
        move |f: &F| InstKind::Binop {
            op: BinOp::Add,
            lhs: f.c(0),
            rhs: f.c(1),
            flags: Some(fl),
        }
    };
    expect_clean(&with_consts(ints, flagged(0)));
    expect_only(
        &with_consts(ints, flagged(1)),
        Rule::Arithmetic,
        "optimization flags",
    );
}

// ---------------------------------------------------------------------------------------
// Casts.

fn cast_of(op: CastOp, src: Type, dst: Type) -> Module {
    with_consts(
        |b| {
            let s = b.ty(src.clone());
            let d = b.ty(dst);
            (vec![(s, ConstValue::Undef)], d)
        },
        move |f| InstKind::Cast { op, val: f.c(0) },
    )
}

#[test]
fn casts_follow_their_type_rules() {
    use CastOp::*;
    use Type::{Double, Float, Int};
    let ok = [
        (Trunc, Int(32), Int(8)),
        (Trunc, Int(32), Int(1)),
        (ZExt, Int(1), Int(32)),
        (SExt, Int(8), Int(64)),
        (FpTrunc, Double, Float),
        (FpExt, Float, Double),
        (FpToSi, Double, Int(32)),
        (FpToUi, Float, Int(64)),
        (SiToFp, Int(32), Double),
        (UiToFp, Int(8), Float),
        (Bitcast, Int(32), Float),
        (Bitcast, Double, Int(64)),
    ];
    for (op, s, d) in ok {
        expect_clean(&cast_of(op, s, d));
    }
    let bad = [
        (Trunc, Int(8), Int(32), "needs a wider integer source"),
        (Trunc, Float, Int(8), "needs a wider integer source"),
        (ZExt, Int(64), Int(32), "needs a narrower integer source"),
        (SExt, Int(32), Int(32), "needs a narrower integer source"),
        (FpTrunc, Float, Double, "needs double to float"),
        (FpExt, Double, Float, "needs float to double"),
        (FpToSi, Int(32), Int(32), "needs floating point to integer"),
        (UiToFp, Float, Float, "needs integer to floating point"),
        (Bitcast, Int(32), Double, "sizes differ"),
        (PtrToInt, Int(32), Int(32), "no pointer types"),
        (IntToPtr, Int(32), Int(32), "no pointer types"),
    ];
    for (op, s, d, why) in bad {
        expect_only(&cast_of(op, s, d), Rule::Cast, why);
    }
}

#[test]
fn vector_casts_keep_the_element_count() {
    // <4 x i32> to <16 x i8>: the same size, other counts.
    let vec_cast = |op| {
        with_consts(
            |b| {
                let i32t = b.i32();
                let s = b.vec(4, i32t);
                let i8t = b.int(8);
                let d = b.vec(16, i8t);
                (vec![(s, ConstValue::Undef)], d)
            },
            move |f| InstKind::Cast { op, val: f.c(0) },
        )
    };
    expect_only(
        &vec_cast(CastOp::Trunc),
        Rule::Cast,
        "element counts differ",
    );
    // A bitcast may change the count if the size is kept.
    expect_clean(&vec_cast(CastOp::Bitcast));
}

// ---------------------------------------------------------------------------------------
// Compare and select.

fn cmp_of(pred: CmpPred, t: Type, result: Type) -> Module {
    with_consts(
        |b| {
            let s = b.ty(t);
            let r = b.ty(result);
            (vec![(s, ConstValue::Undef), (s, ConstValue::Undef)], r)
        },
        move |f| InstKind::Cmp {
            pred,
            lhs: f.c(0),
            rhs: f.c(1),
        },
    )
}

#[test]
fn compares_match_their_operands_and_give_i1() {
    expect_clean(&cmp_of(CmpPred::ISlt, Type::Int(32), Type::Int(1)));
    expect_clean(&cmp_of(CmpPred::IEq, Type::Int(1), Type::Int(1)));
    expect_clean(&cmp_of(CmpPred::FOlt, Type::Double, Type::Int(1)));
    expect_only(
        &cmp_of(CmpPred::ISlt, Type::Float, Type::Int(1)),
        Rule::Compare,
        "icmp slt on float",
    );
    expect_only(
        &cmp_of(CmpPred::FUno, Type::Int(64), Type::Int(1)),
        Rule::Compare,
        "fcmp uno on i64",
    );
    expect_only(
        &cmp_of(CmpPred::IEq, Type::Int(32), Type::Int(32)),
        Rule::Compare,
        "has result type i32",
    );
    let m = with_consts(
        |b| {
            let (a, c, r) = (b.i32(), b.int(64), b.int(1));
            (vec![(a, int(1)), (c, int(1))], r)
        },
        |f| InstKind::Cmp {
            pred: CmpPred::IEq,
            lhs: f.c(0),
            rhs: f.c(1),
        },
    );
    expect_only(&m, Rule::Compare, "operand types differ");
}

#[test]
fn vector_compares_give_i1_vectors_of_the_same_count() {
    let m = |rlen: u32| {
        with_consts(
            |b| {
                let i32t = b.i32();
                let v = b.vec(4, i32t);
                let i1 = b.int(1);
                let r = b.vec(rlen, i1);
                (vec![(v, ConstValue::Undef), (v, ConstValue::Undef)], r)
            },
            |f| InstKind::Cmp {
                pred: CmpPred::IEq,
                lhs: f.c(0),
                rhs: f.c(1),
            },
        )
    };
    expect_clean(&m(4));
    expect_only(&m(8), Rule::Compare, "has result type <8 x i1>");
}

fn select_of(cond: &dyn Fn(&mut B) -> TypeId, t: Type, f2: Type) -> Module {
    let mut b = B::new();
    let s = b.start();
    let c = cond(&mut b);
    let (tt, tf) = (b.ty(t), b.ty(f2));
    let mut f = b.body(
        s,
        &[
            (c, ConstValue::Undef),
            (tt, ConstValue::Undef),
            (tf, ConstValue::Undef),
        ],
    );
    f.block();
    let k = InstKind::Select {
        cond: f.c(0),
        t: f.c(1),
        f: f.c(2),
    };
    f.val(k, tt);
    f.ret();
    b.finish(f);
    b.build()
}

#[test]
fn select_conditions_and_values() {
    let i1 = |b: &mut B| b.int(1);
    expect_clean(&select_of(&i1, Type::Int(32), Type::Int(32)));
    expect_only(
        &select_of(&|b: &mut B| b.i32(), Type::Int(32), Type::Int(32)),
        Rule::Select,
        "select condition of type i32",
    );
    expect_only(
        &select_of(&i1, Type::Int(32), Type::Int(64)),
        Rule::Select,
        "select between i32 and i64",
    );
}

#[test]
fn vector_selects_need_an_i1_vector_of_the_same_count() {
    let m = |cond: &dyn Fn(&mut B) -> TypeId| {
        let mut b = B::new();
        let s = b.start();
        let c = cond(&mut b);
        let tt = v4f32(&mut b);
        let mut f = b.body(s, &[(c, ConstValue::Undef), (tt, ConstValue::Undef)]);
        f.block();
        let k = InstKind::Select {
            cond: f.c(0),
            t: f.c(1),
            f: f.c(1),
        };
        f.val(k, tt);
        f.ret();
        b.finish(f);
        b.build()
    };
    expect_clean(&m(&|b: &mut B| {
        let i1 = b.int(1);
        b.vec(4, i1)
    }));
    // The manual requires UnderlyingCount(C) == UnderlyingCount(T).
    expect_only(
        &m(&|b: &mut B| b.int(1)),
        Rule::Select,
        "select condition of type i1 for values of type <4 x float>",
    );
}

// ---------------------------------------------------------------------------------------
// Vectors.

/// `_start` with constants `%c0 = <4 x i32> undef`, `%c1 = i32 idx`, `%c2 = i32 1`,
/// `%c3 = i8 0` and one instruction.
fn vec_inst(idx: u64, kind: impl FnOnce(&F) -> InstKind, result: fn(&mut B) -> TypeId) -> Module {
    let mut b = B::new();
    let s = b.start();
    let i32t = b.i32();
    let v = b.vec(4, i32t);
    let i8t = b.int(8);
    let r = result(&mut b);
    let mut f = b.body(
        s,
        &[
            (v, ConstValue::Undef),
            (i32t, int(idx)),
            (i32t, int(1)),
            (i8t, int(0)),
        ],
    );
    f.block();
    let k = kind(&f);
    f.val(k, r);
    f.ret();
    b.finish(f);
    b.build()
}

fn v4i32(b: &mut B) -> TypeId {
    let i = b.i32();
    b.vec(4, i)
}

#[test]
fn extractelement_needs_a_constant_index_in_range() {
    let ex = |f: &F| InstKind::ExtractElement {
        vec: f.c(0),
        index: f.c(1),
    };
    expect_clean(&vec_inst(3, ex, B::i32));
    expect_only(
        &vec_inst(4, ex, B::i32),
        Rule::Vector,
        "index 4 is out of range",
    );
    expect_only(
        &vec_inst(
            0,
            |f| InstKind::ExtractElement {
                vec: f.c(0),
                index: f.p(0),
            },
            B::i32,
        ),
        Rule::Vector,
        "index must be a constant",
    );
    expect_only(
        &vec_inst(
            0,
            |f| InstKind::ExtractElement {
                vec: f.c(0),
                index: f.c(3),
            },
            B::i32,
        ),
        Rule::Vector,
        "index has type i8, not i32",
    );
    expect_only(
        &vec_inst(0, ex, |b| b.int(8)),
        Rule::Vector,
        "has result type i8",
    );
    expect_only(
        &vec_inst(
            0,
            |f| InstKind::ExtractElement {
                vec: f.c(1),
                index: f.c(1),
            },
            B::i32,
        ),
        Rule::Vector,
        "extractelement from non-vector i32",
    );
}

#[test]
fn insertelement_types_and_index() {
    let ins = |elt: u32| {
        move |f: &F| InstKind::InsertElement {
            vec: f.c(0),
            elt: f.c(elt),
            index: f.c(1),
        }
    };
    expect_clean(&vec_inst(2, ins(2), v4i32));
    expect_only(
        &vec_inst(9, ins(2), v4i32),
        Rule::Vector,
        "index 9 is out of range",
    );
    expect_only(
        &vec_inst(0, ins(3), v4i32),
        Rule::Vector,
        "insertelement of i8 into <4 x i32>",
    );
    expect_only(
        &vec_inst(0, ins(2), B::i32),
        Rule::Vector,
        "has result type i32",
    );
    expect_only(
        &vec_inst(
            0,
            |f| InstKind::InsertElement {
                vec: f.c(1),
                elt: f.c(2),
                index: f.c(1),
            },
            B::i32,
        ),
        Rule::Vector,
        "insertelement into non-vector i32",
    );
}

// ---------------------------------------------------------------------------------------
// Memory.

fn load_of(t: fn(&mut B) -> TypeId, align: u32) -> Module {
    let mut b = B::new();
    let s = b.start();
    let t = t(&mut b);
    let mut f = b.body(s, &[]);
    f.block();
    let p = f.p(0);
    f.load(p, align, t);
    f.ret();
    b.finish(f);
    b.build()
}

fn store_of(t: fn(&mut B) -> TypeId, align: u32) -> Module {
    let mut b = B::new();
    let s = b.start();
    let t = t(&mut b);
    let mut f = b.body(s, &[(t, ConstValue::Undef)]);
    f.block();
    let (p, c) = (f.p(0), f.c(0));
    f.store(p, c, align);
    f.ret();
    b.finish(f);
    b.build()
}

fn v4i1(b: &mut B) -> TypeId {
    let i = b.int(1);
    b.vec(4, i)
}

fn v4f32(b: &mut B) -> TypeId {
    let f = b.float();
    b.vec(4, f)
}

fn v8i16(b: &mut B) -> TypeId {
    let i = b.int(16);
    b.vec(8, i)
}

fn v16i8(b: &mut B) -> TypeId {
    let i = b.int(8);
    b.vec(16, i)
}

#[test]
fn loads_and_stores_of_i1_are_not_allowed() {
    expect_only(
        &load_of(|b| b.int(1), 1),
        Rule::Memory,
        "load of i1 is not allowed",
    );
    expect_only(
        &store_of(|b| b.int(1), 1),
        Rule::Memory,
        "store of i1 is not allowed",
    );
    expect_only(
        &load_of(v4i1, 1),
        Rule::Memory,
        "load of <4 x i1> is not allowed",
    );
    expect_only(
        &store_of(v4i1, 1),
        Rule::Memory,
        "store of <4 x i1> is not allowed",
    );
}

#[test]
fn memory_addresses_are_i32() {
    let mut b = B::new();
    let i64t = b.int(64);
    let void = b.void();
    let g = b.define("g", void, &[i64t]);
    let s = b.start();
    b.empty_body(s);
    let mut f = b.body(g, &[]);
    f.block();
    let p = f.p(0);
    f.load(p, 1, i64t);
    f.store(p, p, 1);
    f.ret();
    b.finish(f);
    let fs = expect_only(
        &b.build(),
        Rule::Memory,
        "load address has type i64, not i32",
    );
    assert!(fs
        .iter()
        .any(|f| f.message.contains("store address has type i64")));
}

#[test]
fn load_store_alignment_table() {
    // Align codes: 1 => 1 byte, 2 => 2, 3 => 4, 4 => 8, 5 => 16; 0 => unspecified.
    let ok: [(TyFn, u32); 8] = [
        (|b| b.int(8), 1),
        (B::i32, 1),
        (|b| b.int(64), 1),
        (B::float, 1),
        (B::float, 3),
        (B::double, 1),
        (B::double, 4),
        (v4i32, 3),
    ];
    for (t, a) in ok {
        expect_clean(&load_of(t, a));
        expect_clean(&store_of(t, a));
    }
    expect_clean(&load_of(v4f32, 3));
    expect_clean(&load_of(v8i16, 2));
    expect_clean(&store_of(v16i8, 1));
    let bad: [(TyFn, u32, &str); 9] = [
        (B::i32, 3, "load of i32 with align 4"),
        (|b| b.int(16), 2, "load of i16 with align 2"),
        (|b| b.int(64), 4, "load of i64 with align 8"),
        (B::float, 4, "load of float with align 8"),
        (B::double, 3, "load of double with align 4"),
        (B::i32, 0, "load of i32 with align 0"),
        (v4i32, 5, "load of <4 x i32> with align 16"),
        (v4i32, 1, "load of <4 x i32> with align 1"),
        (v16i8, 3, "load of <16 x i8> with align 4"),
    ];
    for (t, a, msg) in bad {
        expect_only(&load_of(t, a), Rule::Alignment, msg);
        expect_only(
            &store_of(t, a),
            Rule::Alignment,
            &msg.replace("load", "store"),
        );
    }
}

#[test]
fn alloca_takes_an_i32_size_and_gives_i32() {
    let m = |size: fn(&mut B) -> TypeId, result: fn(&mut B) -> TypeId, align: u32| {
        let mut b = B::new();
        let s = b.start();
        let (st, rt) = (size(&mut b), result(&mut b));
        let mut f = b.body(s, &[(st, int(8))]);
        f.block();
        let c = f.c(0);
        f.val(
            InstKind::Alloca {
                size: c,
                align: Align(align),
            },
            rt,
        );
        f.ret();
        b.finish(f);
        b.build()
    };
    expect_clean(&m(B::i32, B::i32, 4));
    expect_clean(&m(B::i32, B::i32, 0));
    expect_only(
        &m(|b| b.int(64), B::i32, 4),
        Rule::Alloca,
        "size has type i64",
    );
    expect_only(
        &m(B::i32, |b| b.int(64), 4),
        Rule::Alloca,
        "result has type i64",
    );
    expect_only(&m(B::i32, B::i32, 31), Rule::Alignment, "exceeds 2^29");
}

// ---------------------------------------------------------------------------------------
// Terminators.

#[test]
fn ret_matches_the_return_type() {
    let m = |rt: fn(&mut B) -> TypeId, val: Option<u32>| {
        let mut b = B::new();
        let s = b.start();
        let r = rt(&mut b);
        let g = b.define("g", r, &[]);
        let (i32t, i64t) = (b.i32(), b.int(64));
        b.empty_body(s);
        let mut f = b.body(g, &[(i32t, int(0)), (i64t, int(0))]);
        f.block();
        match val {
            Some(k) => {
                let c = f.c(k);
                f.ret_val(c)
            }
            None => f.ret(),
        }
        b.finish(f);
        b.build()
    };
    expect_clean(&m(B::i32, Some(0)));
    expect_clean(&m(B::void, None));
    expect_only(
        &m(B::i32, None),
        Rule::Return,
        "ret void in a function returning i32",
    );
    expect_only(
        &m(B::i32, Some(1)),
        Rule::Return,
        "ret i64 in a function returning i32",
    );
    expect_only(
        &m(B::void, Some(0)),
        Rule::Return,
        "ret with a value in a function returning void",
    );
}

#[test]
fn branch_conditions_are_i1() {
    let m = blocks(
        |b| vec![(b.i32(), int(1))],
        |f, _| {
            f.block();
            let c = f.c(0);
            f.op(InstKind::CondBr {
                cond: c,
                then_bb: BlockId(1),
                else_bb: BlockId(1),
            });
            f.block();
            f.ret();
        },
    );
    expect_only(&m, Rule::Branch, "branch condition has type i32, not i1");
}

fn switch_on(t: fn(&mut B) -> TypeId, cases: &[i64]) -> Module {
    let mut b = B::new();
    let s = b.start();
    let t = t(&mut b);
    let mut f = b.body(s, &[(t, ConstValue::Undef)]);
    f.block();
    let c = f.c(0);
    f.op(InstKind::Switch(Box::new(Switch {
        cond: c,
        default: BlockId(1),
        cases: cases
            .iter()
            .map(|&value| SwitchCase {
                value,
                target: BlockId(1),
            })
            .collect(),
    })));
    f.block();
    f.ret();
    b.finish(f);
    b.build()
}

#[test]
fn switch_conditions_and_cases() {
    expect_clean(&switch_on(B::i32, &[0, 1, -1]));
    expect_clean(&switch_on(|b| b.int(8), &[-128, 127, -1]));
    expect_only(
        &switch_on(|b| b.int(1), &[0]),
        Rule::Switch,
        "switch on i1 is not allowed",
    );
    expect_only(
        &switch_on(|b| b.int(8), &[300]),
        Rule::Switch,
        "case value 300 does not fit i8",
    );
    expect_only(
        &switch_on(B::i32, &[5, 5]),
        Rule::Switch,
        "duplicate case value 5",
    );
    // 255 and -1 are the same i8.
    expect_only(
        &switch_on(|b| b.int(8), &[-1, 255]),
        Rule::Switch,
        "duplicate case value 255",
    );
    expect_only(&switch_on(B::float, &[0]), Rule::Switch, "switch on float");
}

// ---------------------------------------------------------------------------------------
// Calls.

/// `_start` calls `@f1 = g` (`ret g(params)`), built by `body`.
fn calls(
    ret: fn(&mut B) -> TypeId,
    params: fn(&mut B) -> Vec<TypeId>,
    consts: fn(&mut B) -> Vec<(TypeId, ConstValue)>,
    body: impl FnOnce(&mut F, u32, TypeId),
) -> Module {
    let mut b = B::new();
    let s = b.start();
    let (r, ps) = (ret(&mut b), params(&mut b));
    let g = b.define("g", r, &ps);
    let cs = consts(&mut b);
    let mut f = b.body(s, &cs);
    f.block();
    body(&mut f, g, r);
    f.ret();
    b.finish(f);
    let void = b.m.types.is_void(r);
    let cs = if void {
        vec![]
    } else {
        vec![(r, ConstValue::Undef)]
    };
    let mut f = b.body(g, &cs);
    f.block();
    if void {
        f.ret();
    } else {
        let c = f.c(0);
        f.ret_val(c);
    }
    b.finish(f);
    b.build()
}

#[test]
fn direct_calls_match_the_callee_signature() {
    let i32s = |b: &mut B| vec![b.i32()];
    let consts = |b: &mut B| vec![(b.i32(), int(1)), (b.int(64), int(1))];
    expect_clean(&calls(B::i32, i32s, consts, |f, g, r| {
        let c = f.c(0);
        f.val(call(g, vec![c]), r);
    }));
    expect_only(
        &calls(B::i32, i32s, consts, |f, g, r| {
            f.val(call(g, vec![]), r);
        }),
        Rule::Call,
        "passes 0 arguments, it takes 1",
    );
    expect_only(
        &calls(B::i32, i32s, consts, |f, g, r| {
            let c = f.c(1);
            f.val(call(g, vec![c]), r);
        }),
        Rule::Call,
        "argument 0 of the call to @f1 has type i64, expected i32",
    );
    expect_only(
        &calls(B::i32, i32s, consts, |f, _, r| {
            f.val(call(9, vec![]), r);
        }),
        Rule::Call,
        "callee @f9 is not a function",
    );
    expect_only(
        &calls(B::i32, i32s, consts, |f, g, _| {
            let c = f.c(0);
            f.op(call(g, vec![c]));
        }),
        Rule::Call,
        "call returning i32 has no result",
    );
    expect_only(
        &calls(
            B::void,
            |_| vec![],
            consts,
            |f, g, _| {
                let t = f.f.consts[0].ty;
                f.val(call(g, vec![]), t);
            },
        ),
        Rule::Call,
        "call of a void function has a result",
    );
    expect_only(
        &calls(B::i32, i32s, consts, |f, g, _| {
            let c = f.c(0);
            let t = f.f.consts[1].ty;
            f.val(call(g, vec![c]), t);
        }),
        Rule::Call,
        "call returning i32 has result type i64",
    );
}

fn indirect(callee: ValueId, args: Vec<ValueId>) -> K {
    K::Call(Callee::Indirect(callee), args, 0)
}

#[test]
fn indirect_calls_use_i32_callees_and_abi_types() {
    // Constants: %c0 i32, %c1 i64, %c2 i8, %c3 i16.
    let with = |body: BodyFn| {
        calls(
            B::void,
            |_| vec![],
            |b| {
                vec![
                    (b.i32(), int(1)),
                    (b.int(64), int(1)),
                    (b.int(8), int(1)),
                    (b.int(16), int(1)),
                ]
            },
            move |f, _, _| body(f),
        )
    };
    expect_clean(&with(|f| {
        let (p, c) = (f.p(0), f.c(0));
        f.op(indirect(p, vec![c]));
        let i32t = f.f.consts[0].ty;
        f.val(indirect(p, vec![]), i32t);
    }));
    let cases: [(BodyFn, &str); 3] = [
        (
            |f| {
                let c = f.c(1);
                f.op(indirect(c, vec![]));
            },
            "indirect callee has type i64",
        ),
        (
            |f| {
                let (p, c) = (f.p(0), f.c(2));
                f.op(indirect(p, vec![c]));
            },
            "indirect call argument 0 has type i8",
        ),
        (
            |f| {
                let p = f.p(0);
                let i16t = f.f.consts[3].ty;
                f.val(indirect(p, vec![]), i16t);
            },
            "indirect call returns i16",
        ),
    ];
    // Each failure names the finding it looked for, and so its case.
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(body, text)| misfit(&with(body), Rule::Call, text, true))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn tail_calls_are_allowed() {
    expect_clean(&start_calls_void_g(
        |g| K::Call(Callee::Direct(FuncId(g)), vec![], 1),
        |_| {},
    ));
}

// ---------------------------------------------------------------------------------------
// Atomics.

/// `_start` calling intrinsic `name` with args picked from constants `%c0 = i32 0..=7`
/// (so `%cK` is the value K) and `%p0`.
fn atomic(name: &str, args: &[Option<u32>]) -> Module {
    let mut b = B::new();
    let s = b.start();
    let (void, i32t, i1) = (b.void(), b.i32(), b.int(1));
    let intr = Intrinsic::from_name(name).unwrap();
    let (ret, params) = intr.signature();
    use pexe2wasm::ir::intrinsics::SigTy;
    let sig = |b: &mut B, t: SigTy| match t {
        SigTy::Void => void,
        SigTy::S(pexe2wasm::ir::Scalar::I32) => i32t,
        SigTy::S(pexe2wasm::ir::Scalar::I1) => i1,
        SigTy::S(pexe2wasm::ir::Scalar::I8) => b.int(8),
        other => panic!("unused in these tests: {other:?}"),
    };
    let r = sig(&mut b, ret);
    let ps: Vec<TypeId> = params.into_iter().map(|p| sig(&mut b, p)).collect();
    let d = b.declare(name, r, &ps);
    let consts: Vec<(TypeId, ConstValue)> = (0..8).map(|k| (i32t, int(k))).collect();
    let mut f = b.body(s, &consts);
    f.block();
    let a: Vec<ValueId> = args
        .iter()
        .map(|x| match x {
            Some(k) => f.c(*k),
            None => f.p(0),
        })
        .collect();
    if b.m.types.is_void(r) {
        f.op(call(d, a));
    } else {
        f.val(call(d, a), r);
    }
    f.ret();
    b.finish(f);
    b.build()
}

const P: Option<u32> = None;

fn c(k: u64) -> Option<u32> {
    Some(k as u32)
}

#[test]
fn atomic_load_and_store_memory_orders() {
    let load = "llvm.nacl.atomic.load.i32";
    let store = "llvm.nacl.atomic.store.i32";
    for o in [mo::ACQUIRE, mo::SEQ_CST] {
        expect_clean(&atomic(load, &[P, c(o)]));
    }
    for o in [mo::RELEASE, mo::SEQ_CST] {
        expect_clean(&atomic(store, &[P, P, c(o)]));
    }
    for o in [0, mo::RELAXED, mo::CONSUME, mo::RELEASE, mo::ACQ_REL, 7] {
        expect_only(
            &atomic(load, &[P, c(o)]),
            Rule::Atomic,
            "atomic load with memory order",
        );
    }
    for o in [0, mo::RELAXED, mo::CONSUME, mo::ACQUIRE, mo::ACQ_REL, 7] {
        expect_only(
            &atomic(store, &[P, P, c(o)]),
            Rule::Atomic,
            "atomic store with memory order",
        );
    }
    expect_only(
        &atomic(load, &[P, c(mo::RELAXED)]),
        Rule::Atomic,
        "memory order relaxed is not allowed",
    );
    expect_only(
        &atomic(load, &[P, P]),
        Rule::Atomic,
        "memory order (argument 1) must be a constant",
    );
}

#[test]
fn atomic_rmw_operations_and_orders() {
    let rmw = "llvm.nacl.atomic.rmw.i32";
    for op in 1..=6 {
        expect_clean(&atomic(rmw, &[c(op), P, P, c(mo::SEQ_CST)]));
    }
    for o in [mo::ACQUIRE, mo::RELEASE, mo::ACQ_REL] {
        expect_clean(&atomic(rmw, &[c(1), P, P, c(o)]));
    }
    expect_only(
        &atomic(rmw, &[c(0), P, P, c(6)]),
        Rule::Atomic,
        "operation 0 is not one of",
    );
    expect_only(
        &atomic(rmw, &[c(7), P, P, c(6)]),
        Rule::Atomic,
        "operation 7 is not one of",
    );
    expect_only(
        &atomic(rmw, &[P, P, P, c(6)]),
        Rule::Atomic,
        "operation (argument 0) must be a constant",
    );
    expect_only(
        &atomic(rmw, &[c(1), P, P, c(mo::CONSUME)]),
        Rule::Atomic,
        "atomic rmw with memory order consume",
    );
}

#[test]
fn atomic_cmpxchg_memory_order_pairs() {
    let x = "llvm.nacl.atomic.cmpxchg.i32";
    for (s, f) in [(6, 6), (6, 3), (5, 3), (3, 3)] {
        expect_clean(&atomic(x, &[P, P, P, c(s), c(f)]));
    }
    for (s, f) in [
        (6, 5),
        (6, 4),
        (6, 1),
        (5, 5),
        (4, 4),
        (4, 1),
        (3, 6),
        (1, 1),
        (2, 2),
    ] {
        expect_only(
            &atomic(x, &[P, P, P, c(s), c(f)]),
            Rule::Atomic,
            "atomic cmpxchg with memory orders",
        );
    }
    expect_only(
        &atomic(x, &[P, P, P, c(6), P]),
        Rule::Atomic,
        "failure memory order (argument 4) must be a constant",
    );
}

#[test]
fn atomic_fence_and_is_lock_free() {
    let fence = "llvm.nacl.atomic.fence";
    for o in 3..=6 {
        expect_clean(&atomic(fence, &[c(o)]));
    }
    for o in [0, 1, 2, 7] {
        expect_only(
            &atomic(fence, &[c(o)]),
            Rule::Atomic,
            "atomic fence with memory order",
        );
    }
    expect_clean(&atomic("llvm.nacl.atomic.fence.all", &[]));
    let free = "llvm.nacl.atomic.is.lock.free";
    expect_clean(&atomic(free, &[c(4), P]));
    expect_only(
        &atomic(free, &[P, P]),
        Rule::Atomic,
        "byte size (argument 0) must be a constant",
    );
}

// ---------------------------------------------------------------------------------------
// Result types.

#[test]
fn results_must_have_value_types() {
    // A load "of" a function type: both a memory and a result-type finding.
    let m = load_of(
        |b| {
            let void = b.void();
            b.fn_ty(void, &[])
        },
        1,
    );
    expect(
        &m,
        Rule::ResultType,
        "result of type void () is not allowed",
    );
    expect(&m, Rule::Memory, "load of void () is not allowed");
}

// ---------------------------------------------------------------------------------------
// check_runnable.

#[test]
fn check_runnable_requires_a_defined_void_i32_start() {
    // No _start.
    let mut b = B::new();
    let void = b.void();
    let g = b.define("main", void, &[]);
    b.empty_body(g);
    let m = b.build();
    expect_clean(&m);
    let e = check_runnable(&m).unwrap_err();
    assert_eq!(e.rule, Rule::EntryPoint);
    assert!(e.message.contains("no function named _start"), "{e}");
    assert!(
        e.to_string().starts_with("bit 0 (byte 0:0): module: "),
        "{e}"
    );

    // Wrong signature: i32 (i32).
    let mut b = B::new();
    let i32t = b.i32();
    let t = b.fn_ty(i32t, &[i32t]);
    let s = b.add_fn("_start", t, false, Linkage::External);
    let mut f = b.body(s, &[]);
    f.block();
    let p = f.p(0);
    f.ret_val(p);
    b.finish(f);
    let m = b.build();
    expect_clean(&m);
    let e = check_runnable(&m).unwrap_err();
    assert!(e.message.contains("_start has type i32 (i32)"), "{e}");
    assert_eq!(e.position.bit, 100);

    // Declared only.
    let mut m = minimal();
    m.functions[0].is_proto = true;
    m.functions[0].body = None;
    m.function_bodies.clear();
    assert!(check_runnable(&m)
        .unwrap_err()
        .message
        .contains("declared but not defined"));

    // Internal.
    let mut m = minimal();
    m.functions[0].linkage = Linkage::Internal;
    assert!(check_runnable(&m)
        .unwrap_err()
        .message
        .contains("not external"));
}

// ---------------------------------------------------------------------------------------
// Robustness: garbage indices everywhere never panic.

#[test]
fn garbage_ir_does_not_panic() {
    let mut m = start_with(
        |b| vec![(b.i32(), int(1))],
        |f| {
            let c = f.c(0);
            f.val(bin(BinOp::Add, c, c), TypeId(0));
        },
    );
    let big = ValueId(u32::MAX);
    {
        let f = &mut m.function_bodies[0];
        let incoming = f.new_phi(&[(big, BlockId(u32::MAX)), (ValueId(0), BlockId(0))]);
        f.insts.push(Inst {
            kind: InstKind::Phi { incoming },
            ty: TypeId(u32::MAX),
            result: ValueId::NONE,
        });
        // Operand lists outside their pools.
        f.insts.push(Inst {
            kind: InstKind::Phi {
                incoming: Span {
                    start: u32::MAX,
                    len: u32::MAX,
                },
            },
            ty: TypeId(0),
            result: ValueId::NONE,
        });
        f.insts.push(Inst {
            kind: InstKind::Call(Call {
                callee: Callee::Direct(FuncId(0)),
                args: Span {
                    start: 1,
                    len: u32::MAX,
                },
                cc_info: 0,
            }),
            ty: TypeId(0),
            result: ValueId::NONE,
        });
        f.insts.push(Inst {
            kind: InstKind::Switch(Box::new(Switch {
                cond: big,
                default: BlockId(u32::MAX),
                cases: vec![SwitchCase {
                    value: i64::MIN,
                    target: BlockId(77),
                }],
            })),
            ty: TypeId(9999),
            result: ValueId::NONE,
        });
        let call = f.new_call(Callee::Direct(FuncId(u32::MAX)), &[big, big], u32::MAX);
        f.insts.push(Inst {
            kind: InstKind::Call(call),
            ty: TypeId(12345),
            result: ValueId::NONE,
        });
        f.insts.push(Inst {
            kind: InstKind::Load {
                ptr: big,
                align: Align(u32::MAX),
            },
            ty: TypeId(u32::MAX),
            result: ValueId::NONE,
        });
        f.inst_bits.push(u32::MAX);
        f.bit = u64::MAX;
        f.block_starts.push(u32::MAX);
        f.num_blocks = 2;
    }
    m.globals.push(GlobalVar {
        align: Align(u32::MAX),
        is_const: true,
        init: Initializer::Compound(vec![]),
        name: None,
        bit: u64::MAX,
    });
    m.types.push_declared(Type::Vector {
        len: u32::MAX,
        elem: TypeId(0),
    });
    m.types.push_declared(Type::Int(u32::MAX));
    assert!(!verify(&m).is_empty());
    let _ = check_runnable(&m);
}

/// The walk looks up each instruction's operands itself (one arm per kind); it must report
/// them in `InstKind::for_each_operand` order, for every kind, in a sound body (with the
/// dominance checks) as in a body whose layout is broken (without them).
#[test]
fn operand_findings_follow_operand_order_for_every_kind() {
    let missing = |k: u32| ValueId(900 + k);
    let kinds = || {
        let v = missing;
        let k: Vec<K> = vec![
            bin(BinOp::Add, v(1), v(2)).into(),
            InstKind::Cast {
                op: CastOp::Trunc,
                val: v(3),
            }
            .into(),
            InstKind::ExtractElement {
                vec: v(4),
                index: v(5),
            }
            .into(),
            InstKind::InsertElement {
                vec: v(6),
                elt: v(7),
                index: v(8),
            }
            .into(),
            InstKind::Alloca {
                size: v(9),
                align: Align(1),
            }
            .into(),
            InstKind::Load {
                ptr: v(10),
                align: Align(1),
            }
            .into(),
            InstKind::Store {
                ptr: v(11),
                val: v(12),
                align: Align(1),
            }
            .into(),
            InstKind::Cmp {
                pred: CmpPred::IEq,
                lhs: v(13),
                rhs: v(14),
            }
            .into(),
            InstKind::Select {
                cond: v(15),
                t: v(16),
                f: v(17),
            }
            .into(),
            call(0, vec![v(18), v(19)]),
            indirect(v(20), vec![v(21), v(22)]),
        ];
        k
    };
    let mut expected = Vec::new();
    for kind in kinds() {
        let mut body = Function::default();
        let kind = kind.into_kind(&mut body);
        kind.for_each_operand(&body, |v| {
            expected.push(format!("operand %v{} names", v.0 - 2))
        });
    }
    for broken_layout in [false, true] {
        let mut b = B::new();
        let s = b.start();
        b.int(1);
        let mut f = b.body(s, &[]);
        f.block();
        for kind in kinds() {
            f.op(kind);
        }
        let cond = missing(23);
        f.op(InstKind::CondBr {
            cond,
            then_bb: BlockId(1),
            else_bb: if broken_layout {
                BlockId(9)
            } else {
                BlockId(1)
            },
        });
        f.block();
        f.op(InstKind::Switch(Box::new(Switch {
            cond: missing(24),
            default: BlockId(2),
            cases: vec![],
        })));
        f.block();
        f.ret_val(missing(25));
        b.finish(f);
        let m = b.build();
        let got: Vec<String> = verify(&m)
            .into_iter()
            .filter(|x| x.rule == Rule::Operand)
            .map(|x| x.message)
            .collect();
        let mut want = expected.clone();
        for k in [23, 24, 25] {
            want.push(format!("operand %v{} names", 900 + k - 2));
        }
        assert_eq!(got.len(), want.len(), "{got:#?}");
        for (g, w) in got.iter().zip(&want) {
            assert!(g.starts_with(w), "got {g:?}, expected {w:?}; all: {got:#?}");
        }
    }
}
