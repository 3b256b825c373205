//! `PPB_View;1.0/1.1/1.2` (the view `DidChangeView` hands over) and `PPB_Instance;1.0`
//! (BindGraphics binds a Graphics2D context: `graphics_2d.rs`).

use wasmtime::{Caller, Linker};

use super::super::resources::{Resources, View};
use super::super::{lock, mem, write_rect, INSTANCE};
use super::{link_query, read_resource};
use crate::host::Ctx;

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    const VERSIONS: [&str; 3] = ["PPB_View;1.0", "PPB_View;1.1", "PPB_View;1.2"];
    type Flag = fn(&View) -> bool;
    type Scale = fn(&View) -> f32;
    type Rect = fn(&View) -> [i32; 4];
    for (k, iface) in VERSIONS.into_iter().enumerate() {
        link_query(linker, iface, "IsView", |s, res| {
            lock(&s.resources).view(res).is_some() as i32
        })?;
        let flags: [(&str, Flag); 3] = [
            ("IsFullscreen", |v| v.fullscreen),
            ("IsVisible", |v| v.visible),
            ("IsPageVisible", |v| v.page_visible),
        ];
        for (name, flag) in flags {
            link_query(linker, iface, name, move |s, res| {
                lock(&s.resources).view(res).is_some_and(flag) as i32
            })?;
        }
        let rects: [(&str, Rect); 2] = [("GetRect", |v| v.rect), ("GetClipRect", |v| v.clip)];
        for (name, rect) in rects {
            linker.func_wrap(
                iface,
                name,
                move |mut caller: Caller<'_, Ctx>, res: i32, at: i32| -> wasmtime::Result<i32> {
                    match read_resource(&caller, res, Resources::view, rect)? {
                        Some(r) => {
                            write_rect(&mut caller, at, r)?;
                            Ok(1)
                        }
                        None => Ok(0),
                    }
                },
            )?;
        }
        if k >= 1 {
            let scales: [(&str, Scale); 2] = [
                ("GetDeviceScale", |v| v.device_scale),
                ("GetCSSScale", |v| v.css_scale),
            ];
            for (name, scale) in scales {
                link_query(linker, iface, name, move |s, res| {
                    lock(&s.resources).view(res).map_or(0.0, scale)
                })?;
            }
        }
        if k >= 2 {
            linker.func_wrap(
                iface,
                "GetScrollOffset",
                |mut caller: Caller<'_, Ctx>, res: i32, offset: i32| -> wasmtime::Result<i32> {
                    match read_resource(&caller, res, Resources::view, |_| ())? {
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
