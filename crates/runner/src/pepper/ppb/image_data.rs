//! `PPB_ImageData;1.0`: images whose pixels live in module memory (`super::super::gfx`).

use std::sync::Arc;

use wasmtime::{AsContextMut, Caller, Linker};

use super::super::gfx::{self, ImageData, ModuleBlock};
use super::super::resources::{Resource, Resources};
use super::super::{lock, mem, state_for, PepperState};
use super::{link_query, read_resource};
use crate::call_export;
use crate::host::Ctx;

const ID: &str = "PPB_ImageData;1.0";

/// Gives the image blocks nobody holds any more back to the module's allocator.
pub(crate) fn free_unused(
    mut cx: impl AsContextMut<Data = Ctx>,
    s: &PepperState,
) -> wasmtime::Result<()> {
    let blocks = std::mem::take(&mut *lock(&s.gfx.frees));
    for (addr, len) in blocks {
        call_export::<(i32, i32), ()>(&mut cx, "__ppapi_free", (addr as i32, len as i32))?;
    }
    Ok(())
}

fn create(
    mut caller: Caller<'_, Ctx>,
    instance: i32,
    format: i32,
    size: i32,
    _init_to_zero: i32,
) -> wasmtime::Result<i32> {
    let Some(s) = state_for(&caller, instance)? else {
        return Ok(0);
    };
    let [width, height] = mem::read_i32s::<2>(&mut caller, size as u32)?;
    if !(format == gfx::BGRA_PREMUL || format == gfx::RGBA_PREMUL) {
        return Ok(0);
    }
    let Some(len) = gfx::image_bytes(width, height) else {
        return Ok(0);
    };
    free_unused(&mut caller, &s)?;
    // `__ppapi_alloc` hands out zeroed pages, so every image starts transparent black
    // whatever init_to_zero says.
    let addr: i32 = call_export(&mut caller, "__ppapi_alloc", len as i32)?;
    if addr == 0 {
        return Ok(0);
    }
    let pixels = Arc::new(ModuleBlock::new(addr as u32, len, s.gfx.frees.clone()));
    let image = ImageData {
        format,
        width,
        height,
        pixels,
    };
    let id = lock(&s.resources).add(Resource::ImageData(image));
    Ok(id)
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    linker.func_wrap(
        ID,
        "GetNativeImageDataFormat",
        |_: Caller<'_, Ctx>| -> i32 { gfx::BGRA_PREMUL },
    )?;
    linker.func_wrap(
        ID,
        "IsImageDataFormatSupported",
        |_: Caller<'_, Ctx>, format: i32| -> i32 {
            (format == gfx::BGRA_PREMUL || format == gfx::RGBA_PREMUL) as i32
        },
    )?;
    linker.func_wrap(ID, "Create", create)?;
    link_query(linker, ID, "IsImageData", |s, res| {
        lock(&s.resources).image_data(res).is_some() as i32
    })?;
    linker.func_wrap(
        ID,
        "Describe",
        |mut caller: Caller<'_, Ctx>, res: i32, desc: i32| -> wasmtime::Result<i32> {
            // PP_ImageDataDesc: format, size (width, height), stride; zeroed for a
            // resource that is not an image, as Chrome's thunk did.
            let d = read_resource(&caller, res, Resources::image_data, |i| {
                [i.format, i.width, i.height, i.stride()]
            })?;
            mem::write_i32s(&mut caller, desc as u32, &d.unwrap_or([0; 4]))?;
            Ok(d.is_some() as i32)
        },
    )?;
    link_query(linker, ID, "Map", |s, res| {
        // The pixels are always in module memory: the same pointer every time, valid
        // while the resource lives.
        lock(&s.resources)
            .image_data(res)
            .map_or(0, |i| i.pixels.addr as i32)
    })?;
    linker.func_wrap(
        ID,
        "Unmap",
        |_: Caller<'_, Ctx>, _res: i32| -> wasmtime::Result<()> { Ok(()) },
    )?;
    Ok(())
}
