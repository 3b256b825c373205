//! `PPB_ImageData`, `PPB_Graphics2D` and `BindGraphics` against the headers' contracts and
//! Chrome's behaviour, called one by one (`pepper_support::Harness`). Flush callbacks run
//! when the test serves the main thread's mailbox ([`serve`]).

use std::sync::Arc;
use std::time::Duration;

use pexe2wasm_runner::pepper::{pp_error, CaptureSink, PepperConfig, INSTANCE};
use pexe2wasm_runner::wasmtime::Val;
use pexe2wasm_testkit::corpus::Scratch;

use crate::pepper_support::{self, Harness};

const ID: &str = "PPB_ImageData;1.0";
const G0: &str = "PPB_Graphics2D;1.0";
const G1: &str = "PPB_Graphics2D;1.1";
const G2: &str = "PPB_Graphics2D;1.2";
const CORE: &str = "PPB_Core;1.0";

/// The rest of the harness module (`pepper_support::module`): callback 1 stores its result
/// at `user_data` and counts its calls at `user_data + 4`; `__ppapi_free` counts its calls
/// at 0x80 and keeps the last address at 0x84.
const MODULE: &str = r#"
  (func (export "__ppapi_free") (param $a i32) (param $n i32)
    (i32.store (i32.const 0x80) (i32.add (i32.load (i32.const 0x80)) (i32.const 1)))
    (i32.store (i32.const 0x84) (local.get $a)))
  (func $record (param $ud i32) (param $r i32)
    (i32.store (local.get $ud) (local.get $r))
    (i32.store offset=4 (local.get $ud) (i32.add (i32.load offset=4 (local.get $ud)) (i32.const 1))))
  (elem (i32.const 1) $record)
"#;

/// Where the recording callback writes (result, calls).
const CB_DATA: u32 = 0x300;

fn harness_with(frames: Option<&Scratch>) -> Harness {
    let sink = Arc::new(CaptureSink::default());
    let mut config = PepperConfig::new(Vec::new(), sink.clone());
    config.frames = frames.map(|d| d.0.clone());
    Harness::custom(config, sink, &pepper_support::module(MODULE))
}

fn harness() -> Harness {
    harness_with(None)
}

/// Writes a `PP_CompletionCallback` for the recording callback at `at`.
fn callback(h: &mut Harness, at: u32, optional: bool) -> i32 {
    h.write(CB_DATA, &[0; 8]);
    let mut b = 1u32.to_le_bytes().to_vec();
    b.extend_from_slice(&CB_DATA.to_le_bytes());
    b.extend_from_slice(&(optional as u32).to_le_bytes());
    h.write(at, &b);
    at as i32
}

/// `PP_BlockUntilComplete()` at `at`.
fn blocking(h: &mut Harness, at: u32) -> i32 {
    h.write(at, &[0; 12]);
    at as i32
}

/// The recording callback's (last result, calls).
fn recorded(h: &Harness) -> (i32, u32) {
    (h.read_u32(CB_DATA) as i32, h.read_u32(CB_DATA + 4))
}

/// Waits `wait`, then runs what was posted to the main thread's mailbox by then.
fn serve(h: &mut Harness, wait: Duration) {
    std::thread::sleep(wait);
    h.store.data().mailbox().quit().unwrap();
    pexe2wasm_runner::run_loop(&mut h.store).unwrap();
}

fn write_size(h: &mut Harness, at: u32, w: i32, hgt: i32) -> i32 {
    let mut b = w.to_le_bytes().to_vec();
    b.extend_from_slice(&hgt.to_le_bytes());
    h.write(at, &b);
    at as i32
}

fn write_i32s(h: &mut Harness, at: u32, v: &[i32]) -> i32 {
    let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    h.write(at, &b);
    at as i32
}

fn read_i32s(h: &Harness, at: u32, n: u32) -> Vec<i32> {
    h.read(at, 4 * n)
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// A new image of `w` x `hgt` in `format`, filled with `pixel` (4 bytes in the format's
/// order); its id and address.
fn image(h: &mut Harness, format: i32, w: i32, hgt: i32, pixel: [u8; 4]) -> (i32, u32) {
    let size = write_size(h, 0x200, w, hgt);
    let id = h.call(ID, "Create", &[INSTANCE, format, size, 1]);
    assert_ne!(id, 0);
    let p = h.call(ID, "Map", &[id]) as u32;
    let bytes: Vec<u8> = pixel
        .iter()
        .copied()
        .cycle()
        .take((w * hgt * 4) as usize)
        .collect();
    h.write(p, &bytes);
    (id, p)
}

fn context(h: &mut Harness, w: i32, hgt: i32, opaque: bool) -> i32 {
    let size = write_size(h, 0x200, w, hgt);
    let g = h.call(G0, "Create", &[INSTANCE, size, opaque as i32]);
    assert_ne!(g, 0);
    g
}

/// The backing store's pixel (x, y) as (b, g, r, a).
fn pixel(h: &Harness, g: i32, x: i32, y: i32) -> [u8; 4] {
    let st = h.state();
    let r = st.resources();
    r.graphics_2d(g).unwrap().pixel(x, y).unwrap()
}

fn queued(h: &Harness, g: i32) -> usize {
    h.state().resources().graphics_2d(g).unwrap().queued()
}

fn f32_of(v: &[Val]) -> f32 {
    match v {
        [Val::F32(bits)] => f32::from_bits(*bits),
        other => panic!("{other:?}"),
    }
}

#[test]
fn image_data_creates_describes_and_maps_zeroed_pixels() {
    let mut h = harness();
    assert_eq!(h.call(ID, "GetNativeImageDataFormat", &[]), 0);
    assert_eq!(h.call(ID, "IsImageDataFormatSupported", &[0]), 1);
    assert_eq!(h.call(ID, "IsImageDataFormatSupported", &[1]), 1);
    assert_eq!(h.call(ID, "IsImageDataFormatSupported", &[2]), 0);
    let size = write_size(&mut h, 0x200, 5, 3);
    let img = h.call(ID, "Create", &[INSTANCE, 1, size, 0]);
    assert_ne!(img, 0);
    assert_eq!(h.call(ID, "IsImageData", &[img]), 1);
    assert_eq!(h.call(ID, "Describe", &[img, 0x400]), 1);
    // PP_ImageDataDesc: format, width, height, stride (width * 4).
    assert_eq!(read_i32s(&h, 0x400, 4), [1, 5, 3, 20]);
    let p = h.call(ID, "Map", &[img]) as u32;
    assert_ne!(p, 0);
    assert_eq!(
        h.read(p, 60),
        vec![0; 60],
        "a new image is transparent black"
    );
    // The same pointer every time; Unmap changes nothing.
    h.call(ID, "Unmap", &[img]);
    assert_eq!(h.call(ID, "Map", &[img]) as u32, p);
    // A second image has pixels of its own.
    let size = write_size(&mut h, 0x200, 1, 1);
    let other = h.call(ID, "Create", &[INSTANCE, 0, size, 1]);
    let q = h.call(ID, "Map", &[other]) as u32;
    assert!(q >= p + 60 || q + 4 <= p, "{p:#x} {q:#x}");
}

#[test]
fn image_data_refuses_bad_sizes_formats_and_instances() {
    let mut h = harness();
    for (w, hgt) in [
        (0, 5),
        (5, 0),
        (-1, 5),
        (5, -7),
        (16385, 1),
        (1, 16385),
        (16384, 16384),
        (8192, 8193),
        (i32::MAX, i32::MAX),
        (i32::MIN, -1),
    ] {
        let size = write_size(&mut h, 0x200, w, hgt);
        assert_eq!(
            h.call(ID, "Create", &[INSTANCE, 0, size, 1]),
            0,
            "{w}x{hgt}"
        );
        assert_eq!(h.call(G0, "Create", &[INSTANCE, size, 0]), 0, "{w}x{hgt}");
    }
    let size = write_size(&mut h, 0x200, 2, 2);
    assert_eq!(h.call(ID, "Create", &[INSTANCE, 2, size, 1]), 0, "format 2");
    assert_eq!(
        h.call(ID, "Create", &[INSTANCE, -1, size, 1]),
        0,
        "format -1"
    );
    assert_eq!(h.call(ID, "Create", &[INSTANCE + 1, 0, size, 1]), 0);
    assert_eq!(h.call(G0, "Create", &[INSTANCE + 1, size, 1]), 0);
    assert!(h.state().resources().is_empty());
    // Nothing was allocated for the refused ones.
    let (img, p) = image(&mut h, 0, 1, 1, [0; 4]);
    assert_ne!(img, 0);
    assert_eq!(p, 0x100000);
}

#[test]
fn wrong_resources_get_chromes_answers() {
    let mut h = harness();
    let (img, _) = image(&mut h, 0, 2, 2, [1; 4]);
    let g = context(&mut h, 2, 2, false);
    for bad in [0, 0x999, g] {
        assert_eq!(h.call(ID, "IsImageData", &[bad]), 0);
        h.write(0x400, &[7; 16]);
        assert_eq!(h.call(ID, "Describe", &[bad, 0x400]), 0);
        assert_eq!(h.read(0x400, 16), vec![0; 16], "Describe zeroes on failure");
        assert_eq!(h.call(ID, "Map", &[bad]), 0);
        h.call(ID, "Unmap", &[bad]);
    }
    for bad in [0, 0x999, img] {
        assert_eq!(h.call(G1, "IsGraphics2D", &[bad]), 0);
        h.write(0x400, &[7; 12]);
        assert_eq!(h.call(G1, "Describe", &[bad, 0x400, 0x408]), 0);
        assert_eq!(h.read(0x400, 12), vec![0; 12]);
        let s = h.try_call(G1, "GetScale", &[Val::I32(bad)]).unwrap();
        assert_eq!(f32_of(&s), 0.0);
        let r = h
            .try_call(G1, "SetScale", &[Val::I32(bad), Val::F32(2f32.to_bits())])
            .unwrap();
        assert_eq!(r[0].unwrap_i32(), 0);
        // Operations on something that is not a context are ignored.
        let at = write_i32s(&mut h, 0x500, &[0, 0]);
        h.call(G0, "PaintImageData", &[bad, img, at, 0]);
        h.call(G0, "Scroll", &[bad, 0, at]);
        h.call(G0, "ReplaceContents", &[bad, img]);
    }
    // An optional callback gets the error back; a required one gets it later, and the
    // call returns PP_OK_COMPLETIONPENDING (EnterResource::SetResult).
    let cb = callback(&mut h, 0x600, true);
    assert_eq!(h.call(G0, "Flush", &[0x999, cb]), pp_error::BADRESOURCE);
    let cb = callback(&mut h, 0x600, false);
    assert_eq!(h.call(G0, "Flush", &[img, cb]), pp_error::COMPLETIONPENDING);
    serve(&mut h, Duration::from_millis(20));
    assert_eq!(recorded(&h), (pp_error::BADRESOURCE, 1));
    // Painting something that is not an image is ignored.
    let at = write_i32s(&mut h, 0x500, &[0, 0]);
    h.call(G0, "PaintImageData", &[g, g, at, 0]);
    h.call(G0, "ReplaceContents", &[g, 0x999]);
    assert_eq!(queued(&h, g), 0);
}

#[test]
fn graphics_2d_describes_itself_and_keeps_scale_and_layer_transform() {
    let mut h = harness();
    let g = context(&mut h, 4, 2, true);
    for v in [G0, G1, G2] {
        assert_eq!(h.call(v, "IsGraphics2D", &[g]), 1);
        h.write(0x400, &[9; 12]);
        assert_eq!(h.call(v, "Describe", &[g, 0x400, 0x408]), 1);
        assert_eq!(read_i32s(&h, 0x400, 3), [4, 2, 1]);
    }
    let g2 = context(&mut h, 3, 3, false);
    h.call(G0, "Describe", &[g2, 0x400, 0x408]);
    assert_eq!(read_i32s(&h, 0x400, 3), [3, 3, 0]);
    assert_eq!(h.call(ID, "IsImageData", &[g]), 0);
    // A new context is transparent black.
    assert_eq!(pixel(&h, g2, 2, 2), [0; 4]);

    assert_eq!(
        f32_of(&h.try_call(G1, "GetScale", &[Val::I32(g)]).unwrap()),
        1.0
    );
    for (scale, ok) in [(2.0f32, 1), (0.0, 0), (-1.0, 0), (f32::NAN, 0), (0.5, 1)] {
        let r = h
            .try_call(G1, "SetScale", &[Val::I32(g), Val::F32(scale.to_bits())])
            .unwrap();
        assert_eq!(r[0].unwrap_i32(), ok, "{scale}");
    }
    assert_eq!(
        f32_of(&h.try_call(G2, "GetScale", &[Val::I32(g)]).unwrap()),
        0.5
    );

    let origin = write_i32s(&mut h, 0x500, &[1, 2]);
    let translate = write_i32s(&mut h, 0x508, &[-3, 4]);
    let call = |h: &mut Harness, scale: f32| {
        h.try_call(
            G2,
            "SetLayerTransform",
            &[
                Val::I32(g),
                Val::F32(scale.to_bits()),
                Val::I32(origin),
                Val::I32(translate),
            ],
        )
        .unwrap()[0]
            .unwrap_i32()
    };
    assert_eq!(call(&mut h, 1.5), 1);
    assert_eq!(call(&mut h, 0.0), 0);
    let st = h.state();
    let t = st
        .resources()
        .graphics_2d(g)
        .unwrap()
        .layer_transform
        .unwrap();
    assert_eq!((t.scale, t.origin, t.translate), (1.5, (1, 2), (-3, 4)));
}

#[test]
fn bind_graphics_binds_a_context_of_the_instance_and_nothing_else() {
    let mut h = harness();
    const I: &str = "PPB_Instance;1.0";
    let g = context(&mut h, 2, 2, false);
    let (img, _) = image(&mut h, 0, 2, 2, [0; 4]);
    assert_eq!(h.call(I, "BindGraphics", &[INSTANCE, g]), 1);
    assert_eq!(h.state().bound_graphics(), g);
    assert_eq!(h.call(I, "BindGraphics", &[INSTANCE, img]), 0);
    assert_eq!(h.call(I, "BindGraphics", &[INSTANCE, 0x999]), 0);
    assert_eq!(h.call(I, "BindGraphics", &[INSTANCE + 1, g]), 0);
    assert_eq!(
        h.state().bound_graphics(),
        g,
        "a refused bind leaves the binding"
    );
    assert_eq!(h.call(I, "BindGraphics", &[INSTANCE, 0]), 1);
    assert_eq!(h.state().bound_graphics(), 0);
}

#[test]
fn paint_and_replace_are_applied_only_at_flush_with_the_pixels_of_that_moment() {
    let mut h = harness();
    let g = context(&mut h, 4, 2, false);
    // RGBA red, painted with its origin at (1, 0): only the src rect (1, 1, 1, 1) of it.
    let (red, red_px) = image(&mut h, 1, 2, 2, [255, 0, 0, 255]);
    let at = write_i32s(&mut h, 0x500, &[1, 0]);
    let src = write_i32s(&mut h, 0x510, &[1, 1, 1, 1]);
    h.call(G0, "PaintImageData", &[g, red, at, src]);
    assert_eq!(queued(&h, g), 1);
    assert_eq!(pixel(&h, g, 2, 1), [0; 4], "nothing before the flush");
    // What the app writes before the Flush is what shows (pixel (1, 1) of the image).
    h.write(red_px + 12, &[0, 255, 0, 255]);
    // The app may release the image: the queued operation keeps its pixels.
    h.call(CORE, "ReleaseResource", &[red]);
    assert_eq!(h.read_u32(0x80), 0, "not freed while queued");
    let cb = callback(&mut h, 0x600, false);
    assert_eq!(h.call(G0, "Flush", &[g, cb]), pp_error::COMPLETIONPENDING);
    // Green, in BGRA, at (1 + 1, 0 + 1); nothing else.
    assert_eq!(pixel(&h, g, 2, 1), [0, 255, 0, 255]);
    assert_eq!(pixel(&h, g, 1, 0), [0; 4]);
    assert_eq!(pixel(&h, g, 3, 1), [0; 4]);
    assert_eq!(queued(&h, g), 0);
    // The image's block goes back to the allocator once the flush is done with it.
    assert_eq!(h.read_u32(0x80), 1);
    assert_eq!(h.read_u32(0x84), red_px);

    // A BGRA image replacing everything, queued while the first flush is pending.
    let (blue, blue_px) = image(&mut h, 0, 4, 2, [200, 0, 0, 255]);
    h.call(G0, "ReplaceContents", &[g, blue]);
    // A size that is not the context's is ignored.
    let (small, _) = image(&mut h, 0, 2, 2, [1, 1, 1, 255]);
    h.call(G0, "ReplaceContents", &[g, small]);
    assert_eq!(queued(&h, g), 1);
    // A second Flush before the first one's callback ran.
    let opt = callback(&mut h, 0x610, true);
    assert_eq!(h.call(G0, "Flush", &[g, opt]), pp_error::INPROGRESS);
    assert_eq!(
        pixel(&h, g, 0, 0),
        [0; 4],
        "the refused flush applied nothing"
    );
    serve(&mut h, Duration::from_millis(80));
    assert_eq!(recorded(&h), (pp_error::OK, 1));
    // Now the replacement shows at the next flush, and writes after it do not.
    let cb = callback(&mut h, 0x600, false);
    assert_eq!(h.call(G1, "Flush", &[g, cb]), pp_error::COMPLETIONPENDING);
    h.write(blue_px, &[1, 2, 3, 4]);
    for (x, y) in [(0, 0), (3, 1), (2, 1)] {
        assert_eq!(pixel(&h, g, x, y), [200, 0, 0, 255]);
    }
    serve(&mut h, Duration::from_millis(80));
    assert_eq!(recorded(&h), (pp_error::OK, 1));
}

#[test]
fn paint_outside_the_image_or_the_context_is_ignored() {
    let mut h = harness();
    let g = context(&mut h, 4, 4, false);
    let (img, _) = image(&mut h, 0, 2, 2, [9; 4]);
    for (at, src) in [
        ([3, 0], None),                // right edge past the context
        ([-1, 0], None),               // left of it
        ([0, 3], None),                // below it
        ([0, 0], Some([1, 1, 2, 1])),  // src past the image
        ([0, 0], Some([0, 0, 0, 1])),  // empty src
        ([0, 0], Some([-1, 0, 1, 1])), // negative src
        ([i32::MAX, 0], None),         // overflow
    ] {
        let at = write_i32s(&mut h, 0x500, &at);
        let src = match src {
            Some(r) => write_i32s(&mut h, 0x510, &r),
            None => 0,
        };
        h.call(G0, "PaintImageData", &[g, img, at, src]);
    }
    assert_eq!(queued(&h, g), 0);
    // The src rect may reach outside the context as long as what is drawn does not.
    let at = write_i32s(&mut h, 0x500, &[-1, -1]);
    let src = write_i32s(&mut h, 0x510, &[1, 1, 1, 1]);
    h.call(G0, "PaintImageData", &[g, img, at, src]);
    assert_eq!(queued(&h, g), 1);
}

#[test]
fn scroll_moves_the_clip_by_the_amount_at_flush() {
    let mut h = harness();
    let g = context(&mut h, 3, 1, false);
    // Pixels 10, 20, 30 (blue channel), then scroll right by 1 inside the whole area.
    let (img, p) = image(&mut h, 0, 3, 1, [0, 0, 0, 255]);
    h.write(p, &[10, 0, 0, 255, 20, 0, 0, 255, 30, 0, 0, 255]);
    h.call(G0, "ReplaceContents", &[g, img]);
    let by = write_i32s(&mut h, 0x500, &[1, 0]);
    h.call(G0, "Scroll", &[g, 0, by]);
    // Amounts of a whole width or more, and clips outside, are ignored.
    let far = write_i32s(&mut h, 0x508, &[3, 0]);
    h.call(G0, "Scroll", &[g, 0, far]);
    let clip = write_i32s(&mut h, 0x510, &[2, 0, 2, 1]);
    h.call(G0, "Scroll", &[g, clip, by]);
    assert_eq!(queued(&h, g), 2);
    let cb = callback(&mut h, 0x600, true);
    assert_eq!(h.call(G0, "Flush", &[g, cb]), pp_error::COMPLETIONPENDING);
    let blues: Vec<u8> = (0..3).map(|x| pixel(&h, g, x, 0)[0]).collect();
    // The exposed column keeps what it had.
    assert_eq!(blues, [10, 10, 20]);
}

#[test]
fn flush_refuses_a_blocking_callback_on_the_main_thread_and_applies_nothing() {
    let mut h = harness();
    let g = context(&mut h, 2, 2, false);
    let (img, _) = image(&mut h, 0, 2, 2, [5; 4]);
    h.call(G0, "ReplaceContents", &[g, img]);
    let cb = blocking(&mut h, 0x600);
    assert_eq!(h.call(G0, "Flush", &[g, cb]), pp_error::BLOCKS_MAIN_THREAD);
    assert_eq!(queued(&h, g), 1);
    assert_eq!(pixel(&h, g, 0, 0), [0; 4]);
    // Still accepted afterwards: nothing was left pending.
    let cb = callback(&mut h, 0x610, false);
    assert_eq!(h.call(G0, "Flush", &[g, cb]), pp_error::COMPLETIONPENDING);
    assert_eq!(pixel(&h, g, 0, 0), [5; 4]);
}

#[test]
fn frames_are_written_for_the_bound_context_as_straight_rgba_pngs() {
    let dir = Scratch::new("frames");
    let mut h = harness_with(Some(&dir));
    let g = context(&mut h, 3, 2, false);
    let other = context(&mut h, 3, 2, false);
    // Premultiplied BGRA: half-transparent red (128 of 255 red at alpha 128), opaque
    // blue, and transparent.
    let (img, p) = image(&mut h, 0, 3, 2, [0, 0, 0, 0]);
    h.write(p, &[0, 0, 128, 128, 255, 0, 0, 255]);
    // Not bound: no frame.
    h.call(G0, "ReplaceContents", &[other, img]);
    let cb = callback(&mut h, 0x600, false);
    h.call(G0, "Flush", &[other, cb]);
    assert_eq!(h.state().frames_written(), 0);
    assert_eq!(
        h.call("PPB_Instance;1.0", "BindGraphics", &[INSTANCE, g]),
        1
    );
    // Bound, but nothing changed: no frame either.
    let cb = callback(&mut h, 0x610, false);
    h.call(G0, "Flush", &[g, cb]);
    assert_eq!(h.state().frames_written(), 0);
    serve(&mut h, Duration::from_millis(80));
    h.call(G0, "ReplaceContents", &[g, img]);
    let cb = callback(&mut h, 0x600, false);
    assert_eq!(h.call(G0, "Flush", &[g, cb]), pp_error::COMPLETIONPENDING);
    assert_eq!(h.state().frames_written(), 1);
    let file = std::fs::File::open(dir.join("frame-00000.png")).unwrap();
    let mut dec = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; dec.output_buffer_size().unwrap()];
    let info = dec.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (3, 2));
    assert_eq!(info.color_type, png::ColorType::Rgba);
    assert_eq!(&buf[..12], &[255, 0, 0, 128, 0, 0, 255, 255, 0, 0, 0, 0]);
    assert!(!h
        .sink
        .notes
        .lock()
        .unwrap()
        .iter()
        .any(|n| n.contains("frames")));
}

#[test]
fn an_always_opaque_contexts_frames_have_full_alpha() {
    let dir = Scratch::new("frames-opaque");
    let mut h = harness_with(Some(&dir));
    let g = context(&mut h, 1, 1, true);
    h.call("PPB_Instance;1.0", "BindGraphics", &[INSTANCE, g]);
    let (img, _) = image(&mut h, 1, 1, 1, [10, 20, 30, 0]);
    h.call(G0, "ReplaceContents", &[g, img]);
    let cb = callback(&mut h, 0x600, false);
    h.call(G0, "Flush", &[g, cb]);
    let file = std::fs::File::open(dir.join("frame-00000.png")).unwrap();
    let mut dec = png::Decoder::new(std::io::BufReader::new(file))
        .read_info()
        .unwrap();
    let mut buf = vec![0; dec.output_buffer_size().unwrap()];
    dec.next_frame(&mut buf).unwrap();
    assert_eq!(&buf[..4], &[10, 20, 30, 255]);
}

#[test]
fn released_images_go_back_to_the_allocator() {
    let mut h = harness();
    let (img, p) = image(&mut h, 0, 2, 2, [0; 4]);
    h.call(CORE, "AddRefResource", &[img]);
    h.call(CORE, "ReleaseResource", &[img]);
    assert_eq!(h.call(ID, "IsImageData", &[img]), 1);
    h.call(CORE, "ReleaseResource", &[img]);
    assert_eq!(h.call(ID, "IsImageData", &[img]), 0);
    // Given back at the next call that can reach the module.
    let (_, _) = image(&mut h, 0, 1, 1, [0; 4]);
    assert_eq!((h.read_u32(0x80), h.read_u32(0x84)), (1, p));
    // A released context drops its queued operations and their images.
    let g = context(&mut h, 2, 2, false);
    let (img2, p2) = image(&mut h, 0, 2, 2, [0; 4]);
    h.call(G0, "ReplaceContents", &[g, img2]);
    h.call(CORE, "ReleaseResource", &[img2]);
    h.call(CORE, "ReleaseResource", &[g]);
    assert_eq!(h.call(G0, "IsGraphics2D", &[g]), 0);
    let (_, _) = image(&mut h, 0, 1, 1, [0; 4]);
    assert_eq!((h.read_u32(0x80), h.read_u32(0x84)), (2, p2));
}
