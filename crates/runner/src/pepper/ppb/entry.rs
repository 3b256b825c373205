//! The common entry check of the command-line host's PPB calls on a resource with a
//! completion callback, as Chrome's thunks made it (`ppapi/thunk/enter.cc`). Where each
//! call's resource and callback are, the resource's type and the callback's kind are not
//! written here: they are the rules crates/runner/build.rs generates from the interface
//! description ([`ENTRY_RULES`]). A family links such a call with [`link_entered`], giving
//! the resource kind it finds ([`Kind`], checked against the description's type when
//! linking) and the call's behaviour, which runs only once the checks pass.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use pexe2wasm_ppapi::CallbackKind;
use wasmtime::{Caller, Linker, WasmTy};

use super::super::mem::{self, Callback};
use super::super::{answer_now, callback_error, lock, pp_error, state, PepperState};
use crate::host::Ctx;

/// Where a call's entry facts are, as wasm parameter indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryRule {
    /// The `PP_Instance` the call is made on.
    pub instance: Option<usize>,
    /// The `PP_Resource` it is made on, with the type the description gives it.
    pub resource: Option<(usize, Option<&'static str>)>,
    /// Its `PP_CompletionCallback` and what the callback is for.
    pub callback: Option<(usize, CallbackKind)>,
}

include!(concat!(env!("OUT_DIR"), "/entry_rules.rs"));

/// The generated rule of `iface`.`name`, if the call has an instance, a resource or a
/// callback.
pub(crate) fn rule(iface: &str, name: &str) -> Option<&'static EntryRule> {
    ENTRY_RULES
        .binary_search_by(|(i, f, _)| (*i, *f).cmp(&(iface, name)))
        .ok()
        .map(|k| &ENTRY_RULES[k].2)
}

/// The calls linked through [`link_entered`] (for the test that every call the
/// description gives a completion callback goes through the common check).
static ENTERED: Mutex<BTreeSet<(&'static str, &'static str)>> = Mutex::new(BTreeSet::new());

/// The `(interface, function)` pairs linked with the common entry check so far.
pub fn entered_calls() -> Vec<(&'static str, &'static str)> {
    lock(&ENTERED).iter().copied().collect()
}

/// A resource kind calls are made on: its type in the description (the `X` of the
/// interface's `IsX`) and how this host finds one.
pub(super) struct Kind<T> {
    pub name: &'static str,
    pub find: fn(&PepperState, i32) -> Option<T>,
}

/// What a call's behaviour starts from: the host state, its callback and its resource.
pub(super) struct Entered<T> {
    pub s: Arc<PepperState>,
    pub cb: Callback,
    pub on: T,
}

/// A parameter of a PPB function; resources and callbacks are i32s.
pub(super) trait Arg: WasmTy + Copy + Send + Sync + 'static {
    fn word(self) -> Option<i32>;
}

impl Arg for i32 {
    fn word(self) -> Option<i32> {
        Some(self)
    }
}

macro_rules! not_a_word {
    ($($t:ty),*) => {$(
        impl Arg for $t {
            fn word(self) -> Option<i32> {
                None
            }
        }
    )*};
}
not_a_word!(i64, f32, f64);

/// A call's behaviour: `Fn(caller, entered, (every parameter, ...)) -> result`, linked
/// behind the entry check.
pub(super) trait Behaviour<A, T>: Send + Sync + 'static {
    fn link_behind_check(
        self,
        linker: &mut Linker<Ctx>,
        import: (&'static str, &'static str),
        at: (usize, usize),
        find: fn(&PepperState, i32) -> Option<T>,
    ) -> wasmtime::Result<()>;
}

macro_rules! behaviour {
    ($n:literal: $($t:ident $v:ident),+) => {
        impl<F, T: 'static, $($t: Arg),+> Behaviour<($($t,)+), T> for F
        where
            F: Fn(&mut Caller<'_, Ctx>, Entered<T>, ($($t,)+)) -> wasmtime::Result<i32>
                + Send
                + Sync
                + 'static,
        {
            fn link_behind_check(
                self,
                linker: &mut Linker<Ctx>,
                (iface, name): (&'static str, &'static str),
                (res_at, cb_at): (usize, usize),
                find: fn(&PepperState, i32) -> Option<T>,
            ) -> wasmtime::Result<()> {
                if res_at >= $n || cb_at >= $n {
                    return Err(wasmtime::Error::msg(format!(
                        "{iface}.{name}: the description's resource or callback is past its {} parameters",
                        $n
                    )));
                }
                linker.func_wrap(
                    iface,
                    name,
                    move |mut caller: Caller<'_, Ctx>, $($v: $t),+| -> wasmtime::Result<i32> {
                        let words = [$($v.word()),+];
                        let (Some(res), Some(cb)) = (words[res_at], words[cb_at]) else {
                            return Err(wasmtime::Error::msg(format!(
                                "{iface}.{name}: its resource or callback is not an i32"
                            )));
                        };
                        match enter(&mut caller, res, cb, find)? {
                            Ok(e) => self(&mut caller, e, ($($v,)+)),
                            Err(r) => Ok(r),
                        }
                    },
                )?;
                Ok(())
            }
        }
    };
}
behaviour!(2: A a, B b);
behaviour!(3: A a, B b, C c);
behaviour!(4: A a, B b, C c, D d);
behaviour!(5: A a, B b, C c, D d, E e);
behaviour!(6: A a, B b, C c, D d, E e, G g);

/// Links `iface`.`name`, a call on a `kind` resource with a completion callback, as its
/// behaviour behind the common entry check. Fails (naming the call) when the description
/// does not make the call on a resource of `kind`'s type with a completion callback.
pub(super) fn link_entered<A, T: 'static>(
    linker: &mut Linker<Ctx>,
    iface: &'static str,
    name: &'static str,
    kind: &Kind<T>,
    behaviour: impl Behaviour<A, T>,
) -> wasmtime::Result<()> {
    let what = |why: String| wasmtime::Error::msg(format!("{iface}.{name}: {why}"));
    let rule = rule(iface, name).ok_or_else(|| what("no entry rule in the description".into()))?;
    let res_at = match rule.resource {
        Some((at, Some(ty))) if ty == kind.name => at,
        Some((_, ty)) => {
            return Err(what(format!(
                "the description makes it on a {} resource, the host looks for a {}",
                ty.unwrap_or("untyped"),
                kind.name
            )))
        }
        None => return Err(what("the description makes it on no resource".into())),
    };
    let Some((cb_at, CallbackKind::Completion)) = rule.callback else {
        return Err(what(
            "the description gives it no completion callback".into(),
        ));
    };
    lock(&ENTERED).insert((iface, name));
    behaviour.link_behind_check(linker, (iface, name), (res_at, cb_at), kind.find)
}

/// Chrome's checks on entering a call on resource `res` that takes the completion
/// callback at `cb`: the callback errors ([`callback_error`]: a blocking callback on the
/// main thread, a callback on a thread without a message loop), then the resource `find`
/// finds. A bad resource wins: `PP_ERROR_BADRESOURCE` through the callback
/// ([`answer_now`]), or returned at once when the callback was refused as well (Chrome
/// dropped the refused callback, then reported the resource). `Ok(Err(r))`: the call
/// returns `r`.
fn enter<T>(
    caller: &mut Caller<'_, Ctx>,
    res: i32,
    cb: i32,
    find: impl FnOnce(&PepperState, i32) -> Option<T>,
) -> wasmtime::Result<Result<Entered<T>, i32>> {
    let s = state(caller)?;
    let cb = mem::read_callback(&mut *caller, cb as u32)?;
    let refused = callback_error(caller, &cb);
    match (find(&s, res), refused) {
        (Some(_), Some(e)) => Ok(Err(e)),
        (Some(on), None) => Ok(Ok(Entered { s, cb, on })),
        (None, Some(_)) => Ok(Err(pp_error::BADRESOURCE)),
        (None, None) => answer_now(caller, cb, pp_error::BADRESOURCE).map(Err),
    }
}
