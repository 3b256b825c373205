//! `PPB_View;1.0/1.1/1.2` (the view `DidChangeView` hands over) and `PPB_Instance;1.0`
//! (BindGraphics binds a Graphics2D context: `graphics_2d.rs`).

use wasmtime::{Caller, Linker};

use super::super::resources::View;
use super::super::{lock, mem, state, write_rect, INSTANCE};
use crate::host::Ctx;

fn with_view<R>(
    caller: &Caller<'_, Ctx>,
    res: i32,
    f: impl FnOnce(&View) -> R,
) -> wasmtime::Result<Option<R>> {
    let s = state(caller)?;
    let r = lock(&s.resources);
    Ok(r.view(res).map(f))
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    const VERSIONS: [&str; 3] = ["PPB_View;1.0", "PPB_View;1.1", "PPB_View;1.2"];
    for (k, iface) in VERSIONS.into_iter().enumerate() {
        linker.func_wrap(
            iface,
            "IsView",
            |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<i32> {
                Ok(with_view(&caller, res, |_| ())?.is_some() as i32)
            },
        )?;
        linker.func_wrap(
            iface,
            "GetRect",
            |mut caller: Caller<'_, Ctx>, res: i32, rect: i32| -> wasmtime::Result<i32> {
                match with_view(&caller, res, |v| v.rect)? {
                    Some(r) => {
                        write_rect(&mut caller, rect, r)?;
                        Ok(1)
                    }
                    None => Ok(0),
                }
            },
        )?;
        linker.func_wrap(
            iface,
            "IsFullscreen",
            |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<i32> {
                Ok(with_view(&caller, res, |v| v.fullscreen)?.unwrap_or(false) as i32)
            },
        )?;
        linker.func_wrap(
            iface,
            "IsVisible",
            |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<i32> {
                Ok(with_view(&caller, res, |v| v.visible)?.unwrap_or(false) as i32)
            },
        )?;
        linker.func_wrap(
            iface,
            "IsPageVisible",
            |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<i32> {
                Ok(with_view(&caller, res, |v| v.page_visible)?.unwrap_or(false) as i32)
            },
        )?;
        linker.func_wrap(
            iface,
            "GetClipRect",
            |mut caller: Caller<'_, Ctx>, res: i32, rect: i32| -> wasmtime::Result<i32> {
                match with_view(&caller, res, |v| v.clip)? {
                    Some(r) => {
                        write_rect(&mut caller, rect, r)?;
                        Ok(1)
                    }
                    None => Ok(0),
                }
            },
        )?;
        if k >= 1 {
            linker.func_wrap(
                iface,
                "GetDeviceScale",
                |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<f32> {
                    Ok(with_view(&caller, res, |v| v.device_scale)?.unwrap_or(0.0))
                },
            )?;
            linker.func_wrap(
                iface,
                "GetCSSScale",
                |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<f32> {
                    Ok(with_view(&caller, res, |v| v.css_scale)?.unwrap_or(0.0))
                },
            )?;
        }
        if k >= 2 {
            linker.func_wrap(
                iface,
                "GetScrollOffset",
                |mut caller: Caller<'_, Ctx>, res: i32, offset: i32| -> wasmtime::Result<i32> {
                    match with_view(&caller, res, |_| ())? {
                        Some(()) => {
                            mem::write_i32s(&mut caller, offset as u32, &[0, 0])?;
                            Ok(1)
                        }
                        None => Ok(0),
                    }
                },
            )?;
        }
    }
    linker.func_wrap(
        "PPB_Instance;1.0",
        "BindGraphics",
        |caller: Caller<'_, Ctx>, instance: i32, device: i32| -> wasmtime::Result<i32> {
            super::graphics_2d::bind_graphics(&caller, instance, device)
        },
    )?;
    linker.func_wrap(
        "PPB_Instance;1.0",
        "IsFullFrame",
        |_caller: Caller<'_, Ctx>, instance: i32| -> i32 {
            // An embedded module, never a full-frame one (those were for MIME handlers).
            let _ = instance == INSTANCE;
            0
        },
    )?;
    Ok(())
}
