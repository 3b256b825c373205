//! Copies of vars in module memory: the bytes `PPB_Var.VarToUtf8` returns a pointer to and
//! the memory `PPB_VarArrayBuffer.Map` hands out. Chrome gave the plugin pointers into
//! memory it shared with the plugin; here that memory is pages of the module's own heap,
//! taken from the runtime's page allocator (`__ppapi_alloc`, so the app's mmap never hands
//! them out too) and split into size classes, so a short string does not cost a 64 KiB
//! page. A copy lives as long as its var.

use std::collections::HashMap;

use wasmtime::AsContextMut;

use super::var::{PpVar, VarId, VarStore};
use crate::call_export;
use crate::host::Ctx;

/// Smallest block, and the number of power-of-two classes (16 B … 32 KiB).
const MIN_BLOCK: u32 = 16;
const CLASSES: usize = 12;
const PAGE: u32 = 65536;

/// A var's copy in module memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Copy {
    pub addr: u32,
    pub size: u32,
    /// An array buffer (whose bytes the app may change) rather than a string.
    pub buffer: bool,
}

#[derive(Default)]
pub struct ModuleCopies {
    copies: HashMap<i64, Copy>,
    free: [Vec<u32>; CLASSES],
}

fn class_of(size: u32) -> Option<usize> {
    let block = size.max(MIN_BLOCK).next_power_of_two();
    let k = (block / MIN_BLOCK).trailing_zeros() as usize;
    (k < CLASSES).then_some(k)
}

impl ModuleCopies {
    pub fn get(&self, id: VarId) -> Option<Copy> {
        self.copies.get(&id.0).copied()
    }

    /// A block of at least `size` bytes of module memory.
    pub fn alloc(
        &mut self,
        mut cx: impl AsContextMut<Data = Ctx>,
        size: u32,
    ) -> wasmtime::Result<u32> {
        match class_of(size) {
            Some(k) => {
                if let Some(a) = self.free[k].pop() {
                    return Ok(a);
                }
                let page: i32 = call_export(&mut cx, "__ppapi_alloc", PAGE as i32)?;
                if page == 0 {
                    return Err(wasmtime::Error::msg("module memory is exhausted"));
                }
                let block = MIN_BLOCK << k;
                let page = page as u32;
                // Hand out the first block; the rest join the free list, lowest last.
                for a in (1..PAGE / block).rev() {
                    self.free[k].push(page + a * block);
                }
                Ok(page)
            }
            None => {
                let a: i32 = call_export(&mut cx, "__ppapi_alloc", size as i32)?;
                if a == 0 {
                    return Err(wasmtime::Error::msg(format!(
                        "module memory has no room for {size} bytes"
                    )));
                }
                Ok(a as u32)
            }
        }
    }

    fn free_block(&mut self, cx: impl AsContextMut<Data = Ctx>, c: Copy) -> wasmtime::Result<()> {
        match class_of(c.size) {
            Some(k) => {
                self.free[k].push(c.addr);
                Ok(())
            }
            None => {
                call_export::<(i32, i32), ()>(cx, "__ppapi_free", (c.addr as i32, c.size as i32))
            }
        }
    }

    pub fn insert(&mut self, id: VarId, copy: Copy) {
        self.copies.insert(id.0, copy);
    }

    /// The array buffers that have a copy (the app may have written them).
    pub fn buffers(&self) -> Vec<(VarId, Copy)> {
        self.copies
            .iter()
            .filter(|(_, c)| c.buffer)
            .map(|(&id, &c)| (VarId(id), c))
            .collect()
    }

    /// Frees the copies of vars that no longer exist.
    pub fn sweep(
        &mut self,
        mut cx: impl AsContextMut<Data = Ctx>,
        vars: &VarStore,
    ) -> wasmtime::Result<()> {
        let dead: Vec<(i64, Copy)> = self
            .copies
            .iter()
            .filter(|(&id, c)| {
                let v = if c.buffer {
                    PpVar::ArrayBuffer(VarId(id))
                } else {
                    PpVar::String(VarId(id))
                };
                vars.ref_count(v).is_none()
            })
            .map(|(&id, &c)| (id, c))
            .collect();
        for (id, c) in dead {
            self.copies.remove(&id);
            self.free_block(&mut cx, c)?;
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.copies.is_empty()
    }
}
